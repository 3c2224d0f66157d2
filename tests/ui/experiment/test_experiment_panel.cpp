// ExperimentPanel: the form mirrors ExperimentConfig, flags problems in place with the CLI's
// messages, blocks Start while invalid, and reads/writes the CLI's JSON files.
#include "UiTestSupport.h"

#include "engine/config/ConfigSchema.h"
#include "engine/config/DeviceInfo.h"
#include "ui/experiment/ExperimentForm.h"
#include "ui/experiment/ExperimentPanel.h"
#include "ui/experiment/InputCheck.h"
#include "ui/session/DeviceProbe.h"
#include "ui/session/MetaTypes.h"
#include "ui/widgets/ValidatedField.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPushButton>
#include <QScrollArea>
#include <QSignalSpy>
#include <QApplication>
#include <QSpinBox>
#include <QWheelEvent>
#include <QTest>

#include <atomic>
#include <functional>
#include <future>
#include <memory>

using hearth::ui::ExperimentForm;
using hearth::ui::ExperimentPanel;
using hearth::ui::ValidatedField;

namespace {

std::string messageFor(const hearth::ExperimentConfig& c, const std::string& key)
{
    for (const auto& issue : hearth::validate(c, hearth::queryDeviceCapabilities()))
        if (issue.key == key)
            return issue.message;
    return {};
}

// The field (editor, message line, tooltip) that shows `key` in `form`.
ValidatedField* fieldOf(const ExperimentForm& form, const std::string& key)
{
    QWidget* w = form.findChild<QWidget*>(QString::fromStdString(key));
    while (w && !qobject_cast<ValidatedField*>(w))
        w = w->parentWidget();
    if (!w)
        qFatal("no field for %s", key.c_str());
    return static_cast<ValidatedField*>(w);
}

hearth::DeviceCapabilities cpuWithC10d()
{
    hearth::DeviceCapabilities caps;
    caps.distributed = true;
    caps.cpu_threads = 2;
    return caps;
}

}  // namespace

class TestExperimentPanel : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;

    template <typename W> W* field(ExperimentPanel& panel, const char* key)
    {
        auto* w = panel.form()->findChild<W*>(QString::fromLatin1(key));
        if (!w)
            qFatal("no editor %s", key);
        return w;
    }

private Q_SLOTS:
    void initTestCase()
    {
        hearth::test::isolateSettings(m_dir);
        hearth::ui::registerMetaTypes();
        // The panels below start with this machine's capabilities (the probe runs off the GUI thread).
        QTRY_VERIFY(hearth::ui::DeviceProbe::instance().isReady());
    }

    // Turning the wheel over the panel scrolls it: a field that has no focus keeps its value.
    void wheelChangesOnlyAFocusedField()
    {
        ExperimentPanel panel;
        auto* batch = field<QSpinBox>(panel, "trainer.batch_size");
        const int before = batch->value();
        QWheelEvent down(QPointF(5, 5), QPointF(5, 5), QPoint(), QPoint(0, -120), Qt::NoButton, Qt::NoModifier,
                         Qt::NoScrollPhase, false);
        QApplication::sendEvent(batch, &down);
        QCOMPARE(batch->value(), before);
        QVERIFY(!down.isAccepted());   // left to the scroll area
        auto* precision = field<QComboBox>(panel, "trainer.precision");
        const int index = precision->currentIndex();
        QApplication::sendEvent(precision, &down);
        QCOMPARE(precision->currentIndex(), index);
        QCOMPARE(batch->focusPolicy(), Qt::StrongFocus);
    }

    // At its narrowest the panel still shows every field and button whole: the form's scroll area
    // is as wide as the form's widest row (it has no horizontal scroll bar to reach the rest).
    void atItsNarrowestNoFieldIsClipped()
    {
        ExperimentPanel panel;
        panel.resize(panel.minimumSizeHint().width(), 700);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        auto* scroll = panel.findChild<QScrollArea*>();
        QVERIFY(scroll && scroll->widget());
        const QWidget* viewport = scroll->viewport();
        int checked = 0;
        for (const QWidget* w : scroll->widget()->findChildren<QWidget*>()) {
            const bool field = qobject_cast<const QLineEdit*>(w) || qobject_cast<const QAbstractSpinBox*>(w) ||
                               qobject_cast<const QComboBox*>(w) || qobject_cast<const QAbstractButton*>(w);
            if (!field || !w->isVisibleTo(scroll->widget()) || qobject_cast<const QAbstractSpinBox*>(w->parentWidget()))
                continue;
            const int right = w->mapTo(viewport, QPoint(w->width() - 1, 0)).x();
            QVERIFY2(right < viewport->width(), qPrintable(QString("%1 (%2) ends at x=%3 of a %4 px wide view")
                                                               .arg(w->objectName(), w->metaObject()->className())
                                                               .arg(right).arg(viewport->width())));
            ++checked;
        }
        QVERIFY(checked > 20);
    }

    void defaultsMatchTheBuiltInExperiment()
    {
        ExperimentPanel panel;
        QCOMPARE(hearth::configToJson(panel.config()), hearth::configToJson(hearth::ExperimentConfig{}));
        QVERIFY(panel.isValid());
        QVERIFY(panel.startButton()->isEnabled());
        // The default CNN takes every memory toggle.
        for (const char* key : {"model.gradient_checkpointing", "model.inplace_activations", "trainer.set_grads_to_none"})
            QVERIFY2(field<QCheckBox>(panel, key)->isEnabled(), key);
    }

    void everyFieldRoundTripsThroughTheForm()
    {
        hearth::ExperimentConfig c;
        c.name = "round-trip";
        c.seed = 7;
        c.data.kind = "csv";
        c.data.path = "/tmp/train.csv";
        c.data.test_path = "/tmp/test.csv";
        c.data.label_column = "target";
        c.data.val_fraction = 0.2;
        c.data.test_fraction = 0.15;
        c.data.limit = 1234;
        c.model.name = "mlp";
        c.model.hidden = {64, 32, 16};
        c.model.dropout = 0.1;
        c.optimizer = {"sgd", 0.05, 1e-4, 0.8, 0.85, 0.95, 1e-7};
        c.scheduler = {"cosine", 2, 0.5, 10, 1e-5};
        c.trainer.max_epochs = 5;
        c.trainer.batch_size = 128;
        c.trainer.precision = "bf16-mixed";
        c.trainer.accumulate_grad_batches = 4;
        c.trainer.num_workers = 3;
        c.trainer.pin_memory = false;
        c.trainer.prefetch_factor = 3;
        c.trainer.persistent_workers = true;
        c.trainer.gradient_clip_val = 1.5;
        c.trainer.deterministic = true;
        c.trainer.log_every_n_steps = 5;
        c.trainer.num_threads = 2;
        c.trainer.tf32 = true;
        c.trainer.checkpoint = {"val_loss", "min"};
        ExperimentPanel panel;
        panel.setConfig(c);
        QCOMPARE(hearth::configToJson(panel.config()), hearth::configToJson(c));
        QCOMPARE(field<QLineEdit>(panel, "model.hidden")->text(), QStringLiteral("64, 32, 16"));
    }

    void invalidBatchSizeBlocksStartWithTheCliMessage()
    {
        ExperimentPanel panel;
        QSignalSpy validity(&panel, &ExperimentPanel::validityChanged);
        field<QSpinBox>(panel, "trainer.batch_size")->setValue(0);
        QVERIFY(!panel.isValid());
        QVERIFY(!panel.startButton()->isEnabled());
        QCOMPARE(validity.count(), 1);
        hearth::ExperimentConfig expected;
        expected.trainer.batch_size = 0;
        const QString message = QString::fromStdString(messageFor(expected, "trainer.batch_size"));
        QVERIFY(!message.isEmpty());
        QCOMPARE(panel.form()->fieldMessage("trainer.batch_size"), message);
        QVERIFY(field<QSpinBox>(panel, "trainer.batch_size")->toolTip().contains(message));
        QSignalSpy start(&panel, &ExperimentPanel::startRequested);
        panel.requestStart();
        QCOMPARE(start.count(), 0);

        field<QSpinBox>(panel, "trainer.batch_size")->setValue(32);
        QVERIFY(panel.isValid());
        QVERIFY(panel.startButton()->isEnabled());
        QVERIFY(panel.form()->fieldMessage("trainer.batch_size").isEmpty());
        QTest::mouseClick(panel.startButton(), Qt::LeftButton);
        QCOMPARE(start.count(), 1);
        QCOMPARE(start.first().first().value<hearth::ExperimentConfig>().trainer.batch_size, int64_t(32));
    }

    void textThatIsNotANumberIsFlaggedInPlace()
    {
        ExperimentPanel panel;
        field<QLineEdit>(panel, "optimizer.lr")->setText(QStringLiteral("fast"));
        QVERIFY(!panel.isValid());
        QVERIFY(panel.form()->fieldMessage("optimizer.lr").contains(QStringLiteral("must be a number")));
        field<QLineEdit>(panel, "optimizer.lr")->setText(QStringLiteral("3e-4"));
        QVERIFY(panel.isValid());
        QCOMPARE(panel.config().optimizer.lr, 3e-4);
        field<QLineEdit>(panel, "model.channels")->setText(QStringLiteral("32, wide"));
        QVERIFY(panel.form()->fieldMessage("model.channels").contains(QStringLiteral("whole numbers")));
    }

    void crossFieldConflictsShowValidateMessages()
    {
        ExperimentPanel panel;
        field<QCheckBox>(panel, "trainer.persistent_workers")->setChecked(true);
        field<QSpinBox>(panel, "trainer.num_workers")->setValue(0);
        hearth::ExperimentConfig expected;
        expected.trainer.persistent_workers = true;
        expected.trainer.num_workers = 0;
        QCOMPARE(panel.form()->fieldMessage("trainer.persistent_workers"),
                 QString::fromStdString(messageFor(expected, "trainer.persistent_workers")));
        QVERIFY(!panel.startButton()->isEnabled());
        QVERIFY(panel.issues().join('\n').contains(QStringLiteral("trainer.persistent_workers")));

        // A config file asking for a strategy Hearth does not know (the form does not offer it).
        ExperimentPanel strategy;
        auto c = strategy.config();
        c.trainer.strategy = "fsdp";
        strategy.form()->setConfig(c);
        QVERIFY(!strategy.isValid());
        QVERIFY2(strategy.form()->fieldMessage("trainer.strategy").contains(QStringLiteral("fsdp")),
                 qPrintable(strategy.form()->fieldMessage("trainer.strategy")));
    }

    void everyKeyHasItsEditorLabelledFromTheKeyTable()
    {
        ExperimentPanel panel;
        for (const auto& key : hearth::configSchema()) {
            QWidget* editor = panel.form()->findChild<QWidget*>(QString::fromStdString(key.key));
            QVERIFY2(editor, key.key.c_str());
            // The help text of the table is the editor's tooltip (with the key appended).
            const QWidget* tipped = editor;
            while (tipped && tipped->toolTip().isEmpty())
                tipped = tipped->parentWidget();
            QVERIFY2(tipped && tipped->toolTip().contains(QString::fromStdString(key.help)), key.key.c_str());
        }
        QCOMPARE(field<QSpinBox>(panel, "data.limit")->specialValueText(), QString("all samples"));
        QCOMPARE(field<QSpinBox>(panel, "trainer.num_threads")->specialValueText(), QString("default"));
    }

    void theFormOffersOnlyWhatValidationAccepts()
    {
        ExperimentPanel panel;
        hearth::DeviceCapabilities cpu;   // no GPU, no CPU float16 autocast
        panel.form()->setCapabilities(cpu);
        const auto items = [](QComboBox* combo) {
            QStringList out;
            for (int i = 0; i < combo->count(); ++i)
                out << combo->itemData(i).toString();
            return out;
        };
        QCOMPARE(items(field<QComboBox>(panel, "trainer.precision")), (QStringList{"32-true", "bf16-mixed"}));
        QCOMPARE(items(field<QComboBox>(panel, "trainer.accelerator")), (QStringList{"auto", "cpu"}));
        QCOMPARE(items(field<QComboBox>(panel, "trainer.strategy")), QStringList{"auto"});
        QCOMPARE(field<QSpinBox>(panel, "trainer.devices")->maximum(), 1);
        hearth::DeviceCapabilities gpu;
        gpu.cuda_available = true;
        gpu.cuda_device_count = 4;
        gpu.cuda_bf16 = true;
        panel.form()->setCapabilities(gpu);
        QCOMPARE(items(field<QComboBox>(panel, "trainer.precision")),
                 (QStringList{"32-true", "16-mixed", "bf16-mixed"}));
        QCOMPARE(items(field<QComboBox>(panel, "trainer.strategy")), QStringList{"auto"});
        gpu.distributed = true;   // c10d built in: every strategy is offered
        panel.form()->setCapabilities(gpu);
        QCOMPARE(items(field<QComboBox>(panel, "trainer.strategy")), (QStringList{"auto", "ddp", "zero1", "zero2", "zero3", "pipeline"}));
        // A config file asking for what is not offered still shows it, and validation names it.
        auto c = panel.config();
        c.trainer.strategy = "ddp";
        panel.form()->setConfig(c);
        QCOMPARE(field<QComboBox>(panel, "trainer.strategy")->currentData().toString(), QString("ddp"));
        QCOMPARE(panel.config().trainer.strategy, std::string("ddp"));
    }

    // An experiment opened before the machine is probed (the form then offers one device) keeps its
    // trainer.devices: not clamped to 1 and run on one process. Once the probe allows 2 it is valid
    // as it stands; on a machine that offers fewer it still shows the file's value.
    void aLoadedDeviceCountIsNotClampedByTheProbe()
    {
        ExperimentPanel panel;
        panel.form()->setCapabilities(hearth::DeviceCapabilities{}, /*known=*/false);
        QCOMPARE(field<QSpinBox>(panel, "trainer.devices")->maximum(), 1);
        auto c = panel.config();
        c.trainer.devices = 2;
        c.trainer.strategy = "pipeline";
        panel.form()->setConfig(c);
        QCOMPARE(panel.config().trainer.devices.value_or(0), int64_t(2));
        panel.form()->setCapabilities(cpuWithC10d());
        QCOMPARE(panel.config().trainer.devices.value_or(0), int64_t(2));
        QCOMPARE(field<QSpinBox>(panel, "trainer.devices")->maximum(), 8);
        panel.form()->setCapabilities(hearth::DeviceCapabilities{});
        QCOMPARE(panel.config().trainer.devices.value_or(0), int64_t(2));
    }

    void capabilitiesAreShown()
    {
        ExperimentPanel panel;
        const auto caps = hearth::queryDeviceCapabilities();
        auto* label = panel.form()->findChild<QLabel*>(QStringLiteral("capabilities"));
        QVERIFY(label);
        if (!caps.cuda_available)
            QVERIFY(label->text().contains(QStringLiteral("No CUDA device")) &&
                    label->text().contains(QStringLiteral("logical CPUs")));
        else
            QVERIFY(label->text().contains(QStringLiteral("CUDA device")));
        // GPUs are listed with their memory.
        hearth::DeviceCapabilities gpus;
        gpus.cuda_available = true;
        gpus.cuda_device_count = 2;
        gpus.cuda_device_names = {"NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3"};
        gpus.cuda_device_memory = {int64_t(80) << 30, int64_t(80) << 30};
        gpus.distributed = true;
        panel.form()->setCapabilities(gpus);
        QVERIFY2(label->text().contains(QStringLiteral("cuda:1 NVIDIA H100 80GB HBM3 (80")), qPrintable(label->text()));
    }

    void devicesShowTheGlobalBatchAndTheDdpKeysOnlyWhenTheyApply()
    {
        ExperimentPanel panel;
        hearth::DeviceCapabilities cpu;
        cpu.distributed = true;
        cpu.cpu_threads = 2;
        panel.form()->setCapabilities(cpu);
        auto* line = panel.form()->findChild<QLabel*>(QStringLiteral("globalBatch"));
        QVERIFY(line);
        field<QSpinBox>(panel, "trainer.batch_size")->setValue(32);
        field<QSpinBox>(panel, "trainer.accumulate_grad_batches")->setValue(2);
        QVERIFY2(line->text().contains(QStringLiteral("= 64.")), qPrintable(line->text()));
        QVERIFY(!field<QComboBox>(panel, "trainer.ddp.backend")->isEnabled());
        QVERIFY(field<QCheckBox>(panel, "trainer.set_grads_to_none")->isEnabled());
        field<QSpinBox>(panel, "trainer.devices")->setValue(2);   // two Gloo processes
        // Under DDP the toggle still applies: it drops the gradients' views of the reducer's buckets.
        QVERIFY(field<QCheckBox>(panel, "trainer.set_grads_to_none")->isEnabled());
        QVERIFY2(line->text().contains(QStringLiteral("× 2 device(s)")) && line->text().contains(QStringLiteral("= 128.")),
                 qPrintable(line->text()));
        QVERIFY(line->text().contains(QStringLiteral("Start launches 2 processes")));
        QVERIFY(field<QComboBox>(panel, "trainer.ddp.backend")->isEnabled());
        // Validation uses this build's own capabilities: two processes need c10d.
        QVERIFY2(panel.isValid() == hearth::queryDeviceCapabilities().distributed,
                 qPrintable(panel.issues().join('\n')));
        QCOMPARE(panel.config().trainer.devices.value_or(0), int64_t(2));
        field<QSpinBox>(panel, "trainer.devices")->setValue(0);   // the special value: auto
        QVERIFY(!panel.config().trainer.devices.has_value());
        QVERIFY2(line->text().contains(QStringLiteral("× 1 device(s)")), qPrintable(line->text()));
    }

    void savedJsonIsTheCliFormatAndOpensAgain()
    {
        ExperimentPanel panel;
        field<QLineEdit>(panel, "name")->setText(QStringLiteral("saved"));
        field<QSpinBox>(panel, "trainer.max_epochs")->setValue(7);
        const QString path = m_dir.filePath(QStringLiteral("saved.json"));
        QString error;
        QVERIFY2(panel.saveFile(path, &error), qPrintable(error));
        const hearth::ExperimentConfig loaded = hearth::loadConfigFile(path.toStdString());
        QCOMPARE(loaded.name, std::string("saved"));
        QCOMPARE(loaded.trainer.max_epochs, int64_t(7));

        ExperimentPanel other;
        QVERIFY(other.openFile(path, &error));
        QCOMPARE(hearth::configToJson(other.config()), hearth::configToJson(loaded));
        QCOMPARE(other.recentMenu()->actions().first()->toolTip(), QFileInfo(path).absoluteFilePath());
    }

    void brokenJsonIsRefusedWithTheKey()
    {
        const QString path = m_dir.filePath(QStringLiteral("bad.json"));
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"trainer": {"batch_sise": 3}})");
        f.close();
        ExperimentPanel panel;
        QString error;
        QVERIFY(!panel.openFile(path, &error));
        QVERIFY2(error.contains(QStringLiteral("batch_sise")), qPrintable(error));
    }

    void lastConfigIsRestoredAtStart()
    {
        {
            ExperimentPanel panel;
            field<QLineEdit>(panel, "name")->setText(QStringLiteral("remembered"));
            panel.rememberConfig();
        }
        ExperimentPanel next;
        QVERIFY(next.restoreLastConfig());
        QCOMPARE(next.config().name, std::string("remembered"));
    }

    void droppedCsvSelectsTabularDataAndAnMlp()
    {
        const QString csv = m_dir.filePath(QStringLiteral("table.csv"));
        QFile f(csv);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("a,b,label\n1,2,x\n");
        f.close();
        ExperimentPanel panel;
        panel.setDataSource(csv);
        const auto c = panel.config();
        QCOMPARE(c.data.kind, std::string("csv"));
        QCOMPARE(c.model.name, std::string("mlp"));
        QCOMPARE(QString::fromStdString(c.data.path), QFileInfo(csv).absoluteFilePath());
        panel.setDataSource(m_dir.path());
        QCOMPARE(panel.config().data.kind, std::string("idx"));
    }

    // A folder of class subfolders holding images opens as an image folder with an image model;
    // the image-folder keys apply, the text ones do not.
    void droppedImageFolderSelectsImageFolderData()
    {
        const QString root = m_dir.filePath(QStringLiteral("pets"));
        for (const QString& cls : {QStringLiteral("cat"), QStringLiteral("dog")}) {
            QDir().mkpath(root + "/" + cls);
            QFile f(root + "/" + cls + "/a.jpg");
            QVERIFY(f.open(QIODevice::WriteOnly));
        }
        ExperimentPanel panel;
        panel.setDataSource(m_dir.filePath(QStringLiteral("table.csv")));   // an mlp first
        panel.setDataSource(root);
        const auto c = panel.config();
        QCOMPARE(c.data.kind, std::string("image_folder"));
        QCOMPARE(c.model.name, std::string("cnn"));
        QVERIFY(field<QSpinBox>(panel, "data.image_size")->isEnabled());
        QVERIFY(!field<QLineEdit>(panel, "data.tokenizer")->isEnabled());
    }

    void droppedTextCsvSelectsTextDataAndATransformer()
    {
        const QString csv = m_dir.filePath(QStringLiteral("reviews.csv"));
        QFile f(csv);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("review,sentiment\n\"a fine film, really\",pos\n");
        f.close();
        ExperimentPanel panel;
        panel.setDataSource(csv);
        const auto c = panel.config();
        QCOMPARE(c.data.kind, std::string("text_csv"));
        QCOMPARE(c.data.text_column, std::string("review"));
        QCOMPARE(c.model.name, std::string("distilbert"));
        // Text keys apply now; the image and table model keys do not.
        QVERIFY(field<QLineEdit>(panel, "data.tokenizer")->isEnabled());
        QVERIFY(field<QLineEdit>(panel, "data.text_column")->isEnabled());
        QVERIFY(!field<QLineEdit>(panel, "model.channels")->isEnabled());
        QVERIFY(field<QSpinBox>(panel, "model.hidden_size")->isEnabled());
        // Per-layer checkpointing applies to a transformer; in-place activations (ReLU) do not.
        QVERIFY(field<QCheckBox>(panel, "model.gradient_checkpointing")->isEnabled());
        QVERIFY(!field<QCheckBox>(panel, "model.inplace_activations")->isEnabled());
        // A pretrained checkpoint fixes the sizes and is summarised under its field.
        const QString checkpoint = QStringLiteral(HEARTH_FIXTURES_DIR "/transformer/bert");
        field<QLineEdit>(panel, "model.pretrained")->setText(checkpoint);
        QVERIFY(!field<QSpinBox>(panel, "model.hidden_size")->isEnabled());
        auto* summary = panel.form()->findChild<QLabel*>(QStringLiteral("checkpointSummary"));
        QVERIFY(summary);
        QVERIFY2(summary->text().contains(QStringLiteral("bert: 2 layers, width 32, 4 heads")), qPrintable(summary->text()));
        QVERIFY2(summary->text().contains(QStringLiteral("a classifier with 3 labels")), qPrintable(summary->text()));
        QVERIFY2(summary->text().contains(QStringLiteral("no tokenizer here")), qPrintable(summary->text()));
        field<QLineEdit>(panel, "model.pretrained")->setText(m_dir.path());
        QVERIFY2(summary->text().contains(QStringLiteral("No config.json")), qPrintable(summary->text()));
        QCOMPARE(panel.config().model.pretrained.value_or(""), m_dir.path().toStdString());
    }

    // A TorchScript file is summarised under model.path by `hearth-cli inspect` (the window does not
    // link LibTorch): parameters, submodules, forward; a torch.save file says how to script it.
    void torchscriptFileIsSummarisedUnderItsField()
    {
        ExperimentPanel panel;
        hearth::ExperimentConfig c;
        c.model.name = "torchscript";
        panel.setConfig(c);
        auto* summary = panel.form()->findChild<QLabel*>(QStringLiteral("torchscriptSummary"));
        QVERIFY(summary);
        field<QLineEdit>(panel, "model.path")->setText(QStringLiteral(HEARTH_FIXTURES_DIR "/torchscript/cnn.pt"));
        QTRY_VERIFY_WITH_TIMEOUT(summary->text().contains(QStringLiteral("TorchScript module Cnn: 1,442 parameters")), 30000);
        QVERIFY2(summary->text().contains(QStringLiteral("submodules: conv1 (Conv2d), bn1 (BatchNorm2d)")),
                 qPrintable(summary->text()));
        QVERIFY(summary->text().contains(QStringLiteral("forward(Tensor input) -> Tensor")));
        field<QLineEdit>(panel, "model.path")->setText(QStringLiteral(HEARTH_FIXTURES_DIR "/torchscript/state_dict.pt"));
        QTRY_VERIFY_WITH_TIMEOUT(summary->text().contains(QStringLiteral("torch.jit.script(model)")), 30000);
        field<QLineEdit>(panel, "model.path")->setText(m_dir.filePath(QStringLiteral("missing.pt")));
        QVERIFY(summary->text().contains(QStringLiteral("No such file")));
    }

    // Under zero2 the reducer's keys do nothing: the form disables them and says why, with the
    // reason validate() warns by. The bucket size applies (zero2 reduces in buckets of it).
    void zero2DisablesTheReducerKeysWithTheReason()
    {
        ExperimentForm form;
        form.setCapabilities(cpuWithC10d());
        hearth::ExperimentConfig c;
        c.trainer.strategy = "zero2";
        c.trainer.devices = 2;
        c.trainer.ddp.bucket_cap_mb = 50.0;
        c.trainer.ddp.find_unused_parameters = true;
        form.setConfig(c);
        const QString reason = QStringLiteral("ZeRO-2 shards gradients itself; DDP's buckets are not used");
        std::vector<hearth::ConfigIssue> warnings;
        hearth::validate(form.config(), cpuWithC10d(), &warnings);
        QCOMPARE(warnings.size(), size_t(1));
        QCOMPARE(warnings.front().key, std::string("trainer.ddp.find_unused_parameters"));
        QCOMPARE(QString::fromStdString(warnings.front().message), QStringLiteral("has no effect: ") + reason);
        QVERIFY(fieldOf(form, "trainer.ddp.bucket_cap_mb")->editor()->isEnabled());
        for (const char* key : {"trainer.ddp.find_unused_parameters", "trainer.ddp.gradient_as_bucket_view"}) {
            ValidatedField* field = fieldOf(form, key);
            QVERIFY2(!field->editor()->isEnabled(), key);
            QCOMPARE(field->noEffect(), reason);
            QVERIFY2(field->editor()->toolTip().contains(QStringLiteral("Has no effect here: ") + reason),
                     qPrintable(field->editor()->toolTip()));
        }
        // The process group's keys apply to every distributed strategy.
        QVERIFY(fieldOf(form, "trainer.ddp.backend")->editor()->isEnabled());
        QVERIFY(fieldOf(form, "trainer.ddp.timeout_s")->editor()->isEnabled());
        // ddp uses its reducer: choosing it in the form enables the keys again, without the reason.
        auto* strategy = form.findChild<QComboBox*>(QStringLiteral("trainer.strategy"));
        strategy->setCurrentIndex(strategy->findData(QStringLiteral("ddp")));
        for (const char* key :
             {"trainer.ddp.bucket_cap_mb", "trainer.ddp.find_unused_parameters", "trainer.ddp.gradient_as_bucket_view"}) {
            QVERIFY2(fieldOf(form, key)->editor()->isEnabled(), key);
            QVERIFY(!fieldOf(form, key)->editor()->toolTip().contains(QStringLiteral("Has no effect here")));
        }
    }

    // Every case the form and the runtime notes decided key by key before the key table's rules,
    // and then every key of every such config: the form's enablement, its tooltip and validate()'s
    // warnings all say the same.
    void everyKeyIsEnabledExactlyWhereValidationDoesNotWarn()
    {
        using Edit = std::function<void(hearth::ExperimentConfig&)>;
        struct Case {
            const char* what;
            Edit edit;
            std::vector<std::pair<const char*, bool>> applies;   // key, enabled
            bool gpu = false;
        };
        const auto textData = [](hearth::ExperimentConfig& c) {
            c.data.kind = "text_csv";
            c.model.name = "distilbert";
            c.data.tokenizer = "vocab.txt";
        };
        const std::vector<Case> cases = {
            {"defaults: cnn on idx, adam, no schedule, 2 workers", [](hearth::ExperimentConfig&) {},
             {{"optimizer.momentum", false}, {"optimizer.beta1", true}, {"optimizer.beta2", true},
              {"optimizer.eps", true}, {"scheduler.step_size", false}, {"scheduler.gamma", false},
              {"scheduler.warmup_steps", false}, {"scheduler.min_lr", false}, {"model.hidden", false},
              {"model.channels", true}, {"model.pretrained", false}, {"model.hidden_size", false},
              {"model.inplace_activations", true}, {"model.dropout", true}, {"data.tokenizer", false},
              {"data.max_length", false}, {"data.padding", false}, {"data.bucket_by_length", false},
              {"data.text_column", false}, {"data.val_path", false}, {"data.test_path", false},
              {"data.label_column", false}, {"data.test_fraction", false}, {"trainer.prefetch_factor", true},
              {"trainer.persistent_workers", true}, {"trainer.set_grads_to_none", true},
              {"trainer.channels_last", true}, {"trainer.cudnn_benchmark", false}, {"trainer.tf32", false},
              {"trainer.ddp.backend", false}, {"trainer.ddp.bucket_cap_mb", false}, {"trainer.ddp.timeout_s", false}}},
            {"sgd", [](hearth::ExperimentConfig& c) { c.optimizer.name = "sgd"; },
             {{"optimizer.momentum", true}, {"optimizer.beta1", false}, {"optimizer.eps", false}}},
            {"adamw", [](hearth::ExperimentConfig& c) { c.optimizer.name = "adamw"; },
             {{"optimizer.momentum", false}, {"optimizer.beta2", true}, {"optimizer.eps", true}}},
            {"step schedule", [](hearth::ExperimentConfig& c) { c.scheduler.name = "step"; },
             {{"scheduler.step_size", true}, {"scheduler.gamma", true}, {"scheduler.min_lr", false}}},
            {"cosine schedule", [](hearth::ExperimentConfig& c) { c.scheduler.name = "cosine"; },
             {{"scheduler.min_lr", true}, {"scheduler.warmup_steps", false}}},
            {"linear-warmup schedule", [](hearth::ExperimentConfig& c) { c.scheduler.name = "linear-warmup"; },
             {{"scheduler.min_lr", true}, {"scheduler.warmup_steps", true}, {"scheduler.gamma", false}}},
            {"mlp", [](hearth::ExperimentConfig& c) { c.model.name = "mlp"; },
             {{"model.hidden", true}, {"model.channels", false}, {"trainer.channels_last", false},
              {"model.inplace_activations", true}}},
            {"csv table", [](hearth::ExperimentConfig& c) { c.data.kind = "csv"; c.model.name = "mlp"; },
             {{"data.val_path", true}, {"data.test_path", true}, {"data.label_column", true},
              {"data.test_fraction", true}, {"data.text_column", false}, {"data.tokenizer", false}}},
            {"csv with a test file",
             [](hearth::ExperimentConfig& c) { c.data.kind = "csv"; c.model.name = "mlp"; c.data.test_path = "t.csv"; },
             {{"data.test_fraction", false}}},
            {"text csv, new distilbert", textData,
             {{"data.tokenizer", true}, {"data.max_length", true}, {"data.padding", true},
              {"data.bucket_by_length", true}, {"data.text_column", true}, {"data.label_column", true},
              {"data.test_fraction", true}, {"model.pretrained", true}, {"model.hidden_size", true},
              {"model.num_heads", true}, {"model.dropout", true}, {"model.inplace_activations", false},
              {"model.channels", false}, {"model.hidden", false}}},
            {"text csv, pretrained distilbert",
             [textData](hearth::ExperimentConfig& c) { textData(c); c.model.pretrained = "checkpoint"; },
             {{"model.hidden_size", false}, {"model.num_layers", false}, {"model.intermediate_size", false},
              {"model.dropout", false}, {"model.pretrained", true}}},
            {"wordnet, new bert",
             [](hearth::ExperimentConfig& c) { c.data.kind = "wordnet"; c.model.name = "bert"; c.data.tokenizer = "v"; },
             {{"data.text_column", false}, {"data.val_path", false}, {"data.label_column", false},
              {"data.test_fraction", true}, {"data.max_length", true}}},
            {"no loader workers",
             [](hearth::ExperimentConfig& c) { c.trainer.num_workers = 0; },
             {{"trainer.prefetch_factor", false}, {"trainer.persistent_workers", false}}},
            {"two processes (strategy auto: ddp)", [](hearth::ExperimentConfig& c) { c.trainer.devices = 2; },
             {{"trainer.set_grads_to_none", true}, {"trainer.ddp.backend", true},
              {"trainer.ddp.find_unused_parameters", true}, {"trainer.ddp.gradient_as_bucket_view", true},
              {"trainer.ddp.bucket_cap_mb", true}, {"trainer.ddp.timeout_s", true}}},
            {"zero1", [](hearth::ExperimentConfig& c) { c.trainer.strategy = "zero1"; c.trainer.devices = 2; },
             {{"trainer.set_grads_to_none", true}, {"trainer.ddp.bucket_cap_mb", true}}},
            {"zero2", [](hearth::ExperimentConfig& c) { c.trainer.strategy = "zero2"; c.trainer.devices = 2; },
             {{"trainer.set_grads_to_none", true}, {"trainer.ddp.backend", true}, {"trainer.ddp.timeout_s", true},
              {"trainer.ddp.find_unused_parameters", false}, {"trainer.ddp.gradient_as_bucket_view", false},
              {"trainer.ddp.bucket_cap_mb", true}}},
            {"zero3", [](hearth::ExperimentConfig& c) { c.trainer.strategy = "zero3"; c.trainer.devices = 2; },
             {{"trainer.ddp.bucket_cap_mb", false}, {"trainer.ddp.gradient_as_bucket_view", false}}},
            {"a GPU", [](hearth::ExperimentConfig&) {},
             {{"trainer.cudnn_benchmark", true}, {"trainer.tf32", true}}, true},
            {"a GPU, accelerator cpu", [](hearth::ExperimentConfig& c) { c.trainer.accelerator = "cpu"; },
             {{"trainer.cudnn_benchmark", false}, {"trainer.tf32", false}}, true},
        };
        hearth::DeviceCapabilities gpu = cpuWithC10d();
        gpu.cuda_available = true;
        gpu.cuda_device_count = 2;
        const hearth::ExperimentConfig defaults;
        ExperimentForm form;
        for (const Case& k : cases) {
            const hearth::DeviceCapabilities caps = k.gpu ? gpu : cpuWithC10d();
            form.setCapabilities(caps);
            hearth::ExperimentConfig c;
            k.edit(c);
            form.setConfig(c);
            for (const auto& [key, enabled] : k.applies)
                QVERIFY2(fieldOf(form, key)->editor()->isEnabled() == enabled, qPrintable(QString("%1: %2").arg(k.what, key)));
            // Every key: disabled exactly where its rule gives a reason (shown in the tooltip), and
            // warned about exactly where it has no effect and is set away from its default.
            for (const hearth::ConfigKey& key : hearth::configSchema()) {
                const std::string why = hearth::noEffectReason(key, c, caps);
                ValidatedField* field = fieldOf(form, key.key);
                const QString where = QString("%1: %2").arg(k.what, QString::fromStdString(key.key));
                QVERIFY2(field->editor()->isEnabled() == why.empty(), qPrintable(where));
                QVERIFY2(why.empty() || field->editor()->toolTip().contains(QString::fromStdString(why)), qPrintable(where));
                std::vector<hearth::ConfigIssue> warnings;
                const auto errors = hearth::validate(c, caps, &warnings);
                const bool warned = std::any_of(warnings.begin(), warnings.end(),
                                                [&](const hearth::ConfigIssue& w) { return w.key == key.key; });
                const bool refused = std::any_of(errors.begin(), errors.end(),
                                                 [&](const hearth::ConfigIssue& e) { return e.key == key.key; });
                const bool isDefault = hearth::configValueJson(key, c) == hearth::configValueJson(key, defaults);
                QVERIFY2(warned == (!why.empty() && !isDefault && !refused), qPrintable(where));
            }
        }
        // A value set away from its default is warned about where the key has no effect.
        hearth::ExperimentConfig adam;
        adam.optimizer.momentum = 0.5;
        std::vector<hearth::ConfigIssue> warnings;
        QVERIFY(hearth::validate(adam, cpuWithC10d(), &warnings).empty());
        QCOMPARE(warnings.size(), size_t(1));
        QCOMPARE(warnings.front().key, std::string("optimizer.momentum"));
        form.setConfig(adam);
        QVERIFY(!fieldOf(form, "optimizer.momentum")->editor()->isEnabled());
    }

    // A key that validation refuses stays editable even where it has no effect, so that the value
    // can be taken back (persistent workers without workers: the check box can be cleared).
    void aRefusedKeyStaysEditable()
    {
        ExperimentPanel panel;
        field<QCheckBox>(panel, "trainer.persistent_workers")->setChecked(true);
        field<QSpinBox>(panel, "trainer.num_workers")->setValue(0);
        QVERIFY(!panel.form()->fieldMessage("trainer.persistent_workers").isEmpty());
        QVERIFY(field<QCheckBox>(panel, "trainer.persistent_workers")->isEnabled());
        QVERIFY(!field<QSpinBox>(panel, "trainer.prefetch_factor")->isEnabled());
        field<QCheckBox>(panel, "trainer.persistent_workers")->setChecked(false);
        QVERIFY(panel.isValid());
        QVERIFY(!field<QCheckBox>(panel, "trainer.persistent_workers")->isEnabled());
    }

    void runningDisablesStartAndEnablesStop()
    {
        ExperimentPanel panel;
        panel.setRunning(true);
        QVERIFY(!panel.startButton()->isEnabled());
        QVERIFY(panel.stopButton()->isEnabled());
        QSignalSpy stop(&panel, &ExperimentPanel::stopRequested);
        QTest::mouseClick(panel.stopButton(), Qt::LeftButton);
        QCOMPARE(stop.count(), 1);
        panel.setRunning(false);
        QVERIFY(panel.startButton()->isEnabled());
    }

    // The form's path check on a file system that does not answer (a hung network mount): the
    // call returns after its patience with one issue saying so, no second check piles up behind
    // the first, and once the first returns the owner hears of it and the next call checks again.
    void aPathCheckThatHangsIsReportedAndTheFormGoesOn()
    {
        // Shared with the check's thread, which outlives this test if it fails before the release.
        std::promise<void> release;
        const std::shared_future<void> released = release.get_future().share();
        const auto calls = std::make_shared<std::atomic<int>>(0);
        const auto late = std::make_shared<std::atomic<bool>>(false);
        hearth::ui::InputCheck check(std::chrono::milliseconds(50), [released, calls](const hearth::ExperimentConfig& config) {
            ++*calls;
            released.wait();
            return std::vector<hearth::ConfigIssue>{{"data.path", "no such file or folder: " + config.data.path}};
        });
        check.setOnLateResult([late] { *late = true; });
        hearth::ExperimentConfig config;
        config.data.path = "/mnt/nfs/fashion-mnist";

        auto issues = check.problems(config);
        QCOMPARE(issues.size(), size_t{1});
        QCOMPARE(issues[0].key, std::string("data.path"));
        QVERIFY2(QString::fromStdString(issues[0].message).contains("did not answer within 50 ms while checking "
                                                                    "/mnt/nfs/fashion-mnist"),
                 issues[0].message.c_str());
        issues = check.problems(config);   // still hung: said again at once, no second check
        QCOMPARE(issues.size(), size_t{1});
        QVERIFY(QString::fromStdString(issues[0].message).contains("did not answer"));
        QCOMPARE(calls->load(), 1);
        QVERIFY(!late->load());

        release.set_value();
        QTRY_VERIFY(late->load());
        // The call the late answer prompts takes it, without a check of its own (a mount that
        // answers in a second would otherwise stall the window again at every answer).
        issues = check.problems(config);
        QCOMPARE(calls->load(), 1);
        QCOMPARE(issues.size(), size_t{1});
        QCOMPARE(issues[0].message, std::string("no such file or folder: /mnt/nfs/fashion-mnist"));
        issues = check.problems(config);   // the next edit checks again
        QCOMPARE(calls->load(), 2);
        QCOMPARE(issues[0].message, std::string("no such file or folder: /mnt/nfs/fashion-mnist"));
        // A late answer for paths the user has since changed is not taken for the new ones.
        std::promise<void> slow;
        const std::shared_future<void> slowed = slow.get_future().share();
        hearth::ui::InputCheck second(std::chrono::milliseconds(50), [slowed](const hearth::ExperimentConfig& c) {
            slowed.wait();
            return std::vector<hearth::ConfigIssue>{{"data.path", "checked " + c.data.path}};
        });
        const auto answered = std::make_shared<std::atomic<bool>>(false);
        second.setOnLateResult([answered] { *answered = true; });
        second.problems(config);   // hangs past its patience
        slow.set_value();
        QTRY_VERIFY(answered->load());
        hearth::ExperimentConfig moved = config;
        moved.data.path = "/data/fashion-mnist";
        issues = second.problems(moved);
        QCOMPARE(issues.size(), size_t{1});
        QCOMPARE(issues[0].message, std::string("checked /data/fashion-mnist"));
    }

    // A path check that answers in time is the checker's answer, and a checker that throws is a
    // message under data.path rather than a crash.
    void aPathCheckInTimeIsTheCheckersAnswer()
    {
        hearth::ui::InputCheck check(std::chrono::milliseconds(10000));
        hearth::ExperimentConfig config;
        config.data.kind = "csv";
        config.data.path = QDir::tempPath().toStdString();
        const auto issues = check.problems(config);
        QCOMPARE(issues.size(), size_t{1});
        QVERIFY2(QString::fromStdString(issues[0].message).contains("is a folder"), issues[0].message.c_str());
        hearth::ui::InputCheck throwing(std::chrono::milliseconds(10000), [](const hearth::ExperimentConfig&)
                                            -> std::vector<hearth::ConfigIssue> { throw std::runtime_error("EIO"); });
        const auto thrown = throwing.problems(config);
        QCOMPARE(thrown.size(), size_t{1});
        QCOMPARE(thrown[0].message, std::string("could not check the paths: EIO"));
    }
};

QTEST_MAIN(TestExperimentPanel)
#include "test_experiment_panel.moc"
