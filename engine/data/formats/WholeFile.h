#pragma once
// writeWholeFile: a file written whole or not at all, for what a reader may open while it is
// written or a failure may cut short (predictions, exported event files, the token cache). Torch-free.

#include <functional>
#include <ostream>
#include <string>

namespace hearth {

// `write` fills a stream on a temporary file beside `path` (unique to this write: two writers of
// one file do not mix), which then replaces `path`: a reader never sees half a file, and a failure
// leaves what was there before. Returns "" when the file is in place, else why not (the temporary
// is removed). An exception from `write` removes the temporary and propagates.
std::string writeWholeFile(const std::string& path, const std::function<void(std::ostream&)>& write);

}  // namespace hearth
