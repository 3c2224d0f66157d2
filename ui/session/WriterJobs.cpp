#include "ui/session/WriterJobs.h"

#include <map>
#include <mutex>

namespace hearth::ui {

std::shared_ptr<hearth::RunWriter> sharedRunWriter(const QString& dbPath)
{
    static std::mutex mutex;
    static std::map<QString, std::weak_ptr<hearth::RunWriter>> writers;
    std::lock_guard<std::mutex> lock(mutex);
    auto& slot = writers[dbPath];
    if (auto existing = slot.lock())
        return existing;
    auto writer = std::make_shared<hearth::RunWriter>(dbPath.toStdString());
    slot = writer;
    return writer;
}

}  // namespace hearth::ui
