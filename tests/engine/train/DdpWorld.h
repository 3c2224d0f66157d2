#pragma once
// Worlds of real processes for the c10d tests: ddp_rank_child started once per rank with the
// launcher's variables (RANK, WORLD_SIZE, MASTER_PORT, ...) and the DDP_* settings, each rank's
// weights, optimizer share, predictions and exit code read back; a world of this process alone.

#include "DdpTestSupport.h"

#include "engine/dist/C10d.h"

#include <QElapsedTimer>
#include <QProcess>
#include <QString>
#include <QTemporaryDir>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <map>
#include <memory>
#include <vector>

namespace hearth::testing {

// A port that was free a moment ago (the kernel's choice for port 0).
inline int freePort() {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    (void)bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    socklen_t len = sizeof(addr);
    getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    close(fd);
    return ntohs(addr.sin_port);
}

// This process alone: a world of one, its store on a free port.
inline std::shared_ptr<dist::ProcessGroup> joinWorldOfOne() {
    dist::DistEnv env;
    env.master_port = freePort();
    dist::GroupOptions options;
    options.timeout = std::chrono::seconds(30);
    return dist::ProcessGroup::join(env, options);
}

struct World {
    std::vector<torch::Tensor> weights{};  // per rank (undefined when a rank failed)
    std::vector<torch::Tensor> shares{};   // per rank: [optimizer held, model elements, gradients held]
    std::vector<torch::Tensor> predictions{}, losses{};  // per rank: the test split's rows, eval losses
    std::vector<int> exit_codes{};
    std::vector<QString> output{};
    double seconds = 0.0;
};

// One process on the global batch of two ranks of 16: what a 2-process run must reach.
inline DdpSettings globalBatch(const QString& optimizer, int accumulate, double clip, bool float64) {
    DdpSettings single;
    single.optimizer = optimizer.toStdString();
    single.batch = 32;
    single.accumulate = accumulate;
    single.clip = clip;
    single.float64 = float64;
    return single;
}

inline World runWorld(int world, const std::map<QString, QString>& settings, const std::map<int, QString>& per_rank = {},
               int store_port = 0) {
    QTemporaryDir dir;
    const int port = store_port > 0 ? store_port : freePort();
    std::vector<std::unique_ptr<QProcess>> procs;
    QElapsedTimer clock;
    clock.start();
    for (int r = 0; r < world; ++r) {
        auto p = std::make_unique<QProcess>();
        auto env = QProcessEnvironment::systemEnvironment();
        env.insert("RANK", QString::number(r));
        env.insert("LOCAL_RANK", QString::number(r));
        env.insert("WORLD_SIZE", QString::number(world));
        env.insert("LOCAL_WORLD_SIZE", QString::number(world));
        env.insert("MASTER_ADDR", "127.0.0.1");
        env.insert("MASTER_PORT", QString::number(port));
        env.insert("OMP_NUM_THREADS", "1");
        for (const auto& [k, v] : settings) env.insert(k, v);
        if (per_rank.count(r)) env.insert(per_rank.at(r).section('=', 0, 0), per_rank.at(r).section('=', 1));
        p->setProcessEnvironment(env);
        p->setProcessChannelMode(QProcess::MergedChannels);
        p->start(QStringLiteral(HEARTH_DDP_CHILD_PATH), {dir.filePath(QString("rank%1.pt").arg(r))});
        procs.push_back(std::move(p));
    }
    World w;
    for (int r = 0; r < world; ++r) {
        procs[r]->waitForFinished(120000);
        w.exit_codes.push_back(procs[r]->exitStatus() == QProcess::NormalExit ? procs[r]->exitCode() : -1);
        w.output.push_back(QString::fromUtf8(procs[r]->readAll()));
        torch::Tensor t, share, predictions, losses;
        if (w.exit_codes.back() == 0) {
            const std::string file = dir.filePath(QString("rank%1.pt").arg(r)).toStdString();
            torch::load(t, file);
            torch::load(share, file + ".share");
            torch::load(predictions, file + ".predictions");
            torch::load(losses, file + ".losses");
        }
        w.weights.push_back(t);
        w.shares.push_back(share);
        w.predictions.push_back(predictions);
        w.losses.push_back(losses);
    }
    w.seconds = clock.elapsed() / 1000.0;
    return w;
}

inline double maxDiff(const torch::Tensor& a, const torch::Tensor& b) {
    return (a - b).abs().max().item<double>();
}

}  // namespace hearth::testing
