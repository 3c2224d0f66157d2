// TrainingState files: a round trip gives back the model, the optimizer, the random generator
// and the loop's progress exactly (the next steps are bit-identical to never having stopped),
// and a damaged file, one from another model or from a newer Hearth is refused with a message
// while the model and the optimizer stay as they were.

#include "engine/train/TrainingState.h"

#include <QTemporaryDir>
#include <QtTest>

#include <fstream>
#include <iterator>

using namespace hearth;

namespace {

// Linear + batch norm (buffers) + dropout (the random generator): everything a state must carry.
torch::nn::Sequential makeNet(int64_t hidden = 16) {
    torch::manual_seed(3);
    return torch::nn::Sequential(torch::nn::Linear(8, hidden), torch::nn::BatchNorm1d(hidden), torch::nn::ReLU(),
                                 torch::nn::Dropout(0.3), torch::nn::Linear(hidden, 3));
}

// k Adam steps on fixed data; returns each step's loss.
std::vector<float> train(torch::nn::Sequential& net, torch::optim::Optimizer& opt, int steps) {
    std::vector<float> losses;
    const auto x = torch::linspace(-1, 1, int64_t{32} * 8).view({32, 8});
    const auto y = torch::arange(32) % 3;
    net->train();
    for (int i = 0; i < steps; ++i) {
        opt.zero_grad();
        auto loss = torch::nn::functional::cross_entropy(net->forward(x), y);
        loss.backward();
        opt.step();
        losses.push_back(loss.item<float>());
    }
    return losses;
}

std::vector<torch::Tensor> tensorsOf(torch::nn::Sequential& net) {
    std::vector<torch::Tensor> out;
    for (const auto& p : net->parameters()) out.push_back(p.detach().clone());
    for (const auto& b : net->buffers()) out.push_back(b.detach().clone());
    return out;
}

bool sameTensors(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (!torch::equal(a[i], b[i])) return false;
    return true;
}

TrainingState someState() {
    TrainingState s;
    s.loop.epoch = 2;
    s.loop.batch_in_epoch = 7;
    s.loop.global_step = 31;
    s.loop.micro_batches = 62;
    s.loop.epochs_completed = 2;
    s.loop.best_value = 0.8125;
    s.loop.best_epoch = 1;
    s.loop.lr = 0.000731;
    s.epoch = {12.345678901234567, 150, 224, 7, 224, 1, 3.25, 0.875};
    s.elapsed_s = 41.0625;
    s.scaler = GradScalerState{32768.0, 17};
    s.callbacks_json = R"({"early_stopping":{"wait":2,"best":0.41}})";
    return s;
}

}  // namespace

class TestTrainingState : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::string path(const char* name) { return dir_.filePath(name).toStdString(); }

private Q_SLOTS:
    void resumedStepsAreBitIdenticalToUninterruptedOnes();
    void progressRoundTripsExactly();
    void damagedFileIsRefusedAndChangesNothing();
    void otherModelIsRefusedNamingTheDifference();
    void newerFormatIsRefused();
};

void TestTrainingState::resumedStepsAreBitIdenticalToUninterruptedOnes() {
    // Uninterrupted: 8 steps.
    auto a = makeNet();
    torch::optim::Adam opt_a(a->parameters(), torch::optim::AdamOptions(1e-2));
    torch::manual_seed(11);
    const auto losses_a = train(a, opt_a, 8);

    // Interrupted after 5, saved, then a fresh process-like start: other weights, another
    // generator position, a fresh optimizer, then the state read back and 3 more steps.
    auto b = makeNet();
    torch::optim::Adam opt_b(b->parameters(), torch::optim::AdamOptions(1e-2));
    torch::manual_seed(11);
    auto losses_b = train(b, opt_b, 5);
    TrainingState saved = someState();
    saved.cpu_rng = cpuRngState();
    saveTrainingState(path("state.pt"), saved, *b, opt_b);

    auto c = makeNet();
    torch::optim::Adam opt_c(c->parameters(), torch::optim::AdamOptions(1e-2));
    torch::manual_seed(999);
    (void)torch::rand({100});
    const TrainingState loaded = loadTrainingState(path("state.pt"), *c, opt_c);
    setCpuRngState(loaded.cpu_rng);
    const auto rest = train(c, opt_c, 3);
    losses_b.insert(losses_b.end(), rest.begin(), rest.end());

    QCOMPARE(losses_b, losses_a);                        // every loss, bit for bit
    QVERIFY(sameTensors(tensorsOf(c), tensorsOf(a)));   // weights and batch-norm statistics
}

void TestTrainingState::progressRoundTripsExactly() {
    auto net = makeNet();
    torch::optim::Adam opt(net->parameters());
    const TrainingState saved = someState();
    saveTrainingState(path("progress.pt"), saved, *net, opt);
    const TrainingState back = loadTrainingState(path("progress.pt"), *net, opt);
    QCOMPARE(back.format, kTrainingStateFormat);
    QVERIFY(back.loop == saved.loop);
    QVERIFY(back.epoch == saved.epoch);
    QCOMPARE(back.elapsed_s, saved.elapsed_s);
    QVERIFY(back.scaler.has_value());
    QCOMPARE(back.scaler->scale, 32768.0);
    QCOMPARE(back.scaler->growth_tracker, int64_t{17});
    QCOMPARE(QString::fromStdString(back.callbacks_json), QString(R"({"early_stopping":{"wait":2,"best":0.41}})"));
    QVERIFY(back.cpu_rng.defined() && back.cpu_rng.numel() > 0);
    QVERIFY(!QFile::exists(QString::fromStdString(path("progress.pt.partial"))));   // written atomically
}

void TestTrainingState::damagedFileIsRefusedAndChangesNothing() {
    auto net = makeNet();
    torch::optim::Adam opt(net->parameters());
    train(net, opt, 2);
    saveTrainingState(path("good.pt"), someState(), *net, opt);
    std::ifstream in(path("good.pt"), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream(path("cut.pt"), std::ios::binary) << bytes.substr(0, bytes.size() / 2);
    std::ofstream(path("text.pt"), std::ios::binary) << "not a checkpoint at all";

    auto other = makeNet(16);
    torch::optim::Adam other_opt(other->parameters());
    const auto before = tensorsOf(other);
    for (const char* name : {"cut.pt", "text.pt"}) {
        try {
            loadTrainingState(path(name), *other, other_opt);
            QFAIL("a damaged state was accepted");
        } catch (const TrainingStateError& e) {
            QVERIFY2(QString(e.what()).contains("is not a Hearth training state, or it is damaged"), e.what());
            QVERIFY2(QString(e.what()).contains(QString::fromStdString(path(name))), e.what());
        }
        QVERIFY(sameTensors(tensorsOf(other), before));
    }
    try {
        loadTrainingState(path("missing.pt"), *other, other_opt);
        QFAIL("a missing state was accepted");
    } catch (const TrainingStateError& e) {
        QVERIFY2(QString(e.what()).startsWith("There is no training state"), e.what());
    }
}

void TestTrainingState::otherModelIsRefusedNamingTheDifference() {
    auto small = makeNet(16);
    torch::optim::Adam opt(small->parameters());
    saveTrainingState(path("small.pt"), someState(), *small, opt);
    auto wide = makeNet(32);
    torch::optim::Adam wide_opt(wide->parameters());
    const auto before = tensorsOf(wide);
    try {
        loadTrainingState(path("small.pt"), *wide, wide_opt);
        QFAIL("a state of another model was accepted");
    } catch (const TrainingStateError& e) {
        QVERIFY2(QString(e.what()).contains("belongs to another model: the file has 0.weight:16x8 where the model has "
                                            "0.weight:32x8"),
                 e.what());
    }
    QVERIFY(sameTensors(tensorsOf(wide), before));
}

void TestTrainingState::newerFormatIsRefused() {
    auto net = makeNet();
    torch::optim::Adam opt(net->parameters());
    TrainingState future = someState();
    future.format = kTrainingStateFormat + 1;
    saveTrainingState(path("future.pt"), future, *net, opt);
    try {
        loadTrainingState(path("future.pt"), *net, opt);
        QFAIL("a state from a newer Hearth was accepted");
    } catch (const TrainingStateError& e) {
        QVERIFY2(QString(e.what()).contains("was written by a newer Hearth (training state format 2; this Hearth reads "
                                            "up to 1)"),
                 e.what());
    }
}

QTEST_GUILESS_MAIN(TestTrainingState)
#include "test_training_state.moc"
