#include "storage/report/BrowserPrint.h"

#include "storage/tensorboard/TensorBoardExport.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX, for posix_spawn

namespace hearth::report {
namespace {

namespace fs = std::filesystem;

bool executable(const std::string& path) { return !path.empty() && access(path.c_str(), X_OK) == 0 && !fs::is_directory(path); }

// getenv and strerror are not thread-safe against setenv and other strerror calls; Hearth never
// sets its environment, and the messages are copied at once.
// NOLINTBEGIN(concurrency-mt-unsafe)
std::optional<std::string> onPath(const std::string& name) {
    if (name.find('/') != std::string::npos) return executable(name) ? std::optional(name) : std::nullopt;
    const char* path = std::getenv("PATH");
    std::stringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
        const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
        if (executable(candidate)) return candidate;
    }
    return std::nullopt;
}

// A folder of our own under the temporary directory, removed with the object.
class TempDir {
public:
    TempDir() {
        std::string pattern = (fs::temp_directory_path() / "hearth-report-XXXXXX").string();
        if (!mkdtemp(pattern.data()))
            throw ExportError("Cannot make a temporary folder for the PDF: " + std::string(std::strerror(errno)) + ".");
        m_path = pattern;
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(m_path, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::string& path() const { return m_path; }

private:
    std::string m_path;
};

std::string lastLines(const std::string& file, size_t count) {
    std::ifstream in(file);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);)
        if (!line.empty() && line.find("dbus") == std::string::npos) lines.push_back(line);
    std::string out;
    for (size_t i = lines.size() > count ? lines.size() - count : 0; i < lines.size(); ++i) out += "\n  " + lines[i];
    return out;
}

}  // namespace

std::optional<std::string> findBrowser() {
    if (const char* chosen = std::getenv("HEARTH_BROWSER"); chosen && *chosen) return onPath(chosen);
    for (const char* name : {"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"})
        if (auto path = onPath(name)) return path;
    return std::nullopt;
}

std::string noBrowserMessage() {
    const char* chosen = std::getenv("HEARTH_BROWSER");
    if (chosen && *chosen)
        return "--format pdf prints the report with a headless browser, and $HEARTH_BROWSER ('" + std::string(chosen) +
               "') is not an executable program. Point it at Chromium or Google Chrome, or export --format html and "
               "print that page from any browser.";
    return "--format pdf prints the report with a headless Chromium, and none was found (chromium, chromium-browser, "
           "google-chrome or google-chrome-stable on PATH, or $HEARTH_BROWSER). Install it (Debian: sudo apt-get install "
           "chromium), or export --format html and print that page from any browser.";
}

void printToPdf(const std::string& browser, const std::string& html_path, const std::string& pdf_path) {
    const TempDir profile;
    const std::string log = profile.path() + "/browser.log";
    const std::string url = "file://" + fs::absolute(html_path).string();
    std::vector<std::string> args = {browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                                     "--disable-extensions", "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
                                     "--user-data-dir=" + profile.path() + "/profile", "--no-pdf-header-footer",
                                     // About the printed page's width (A4 landscape), so charts are drawn to fit it.
                                     "--window-size=1100,1400",
                                     "--run-all-compositor-stages-before-draw", "--print-to-pdf=" + pdf_path, url};
    std::vector<char*> argv;
    argv.reserve(args.size() + 1);
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
    pid_t pid = 0;
    const int spawned = posix_spawn(&pid, browser.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (spawned != 0) throw ExportError("Cannot start " + browser + ": " + std::strerror(spawned) + ".");
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    std::error_code ec;
    const bool made = fs::is_regular_file(pdf_path, ec) && fs::file_size(pdf_path, ec) > 0;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !made)
        throw ExportError(browser + " did not print the report to '" + pdf_path + "'" +
                          (WIFEXITED(status) ? " (exit code " + std::to_string(WEXITSTATUS(status)) + ")" : " (it crashed)") +
                          ". It said:" + lastLines(log, 6));
}

void writePdf(const std::string& html, const std::string& pdf_path) {
    const auto browser = findBrowser();
    if (!browser) throw ExportError(noBrowserMessage());
    const TempDir dir;
    const std::string page = dir.path() + "/report.html";
    {
        std::ofstream out(page, std::ios::binary | std::ios::trunc);
        out << html;
        if (!out) throw ExportError("Cannot write the temporary page " + page + ".");
    }
    // The browser writes into a file of ours first, so that a failure leaves the user's file as it was.
    const std::string printed = dir.path() + "/report.pdf";
    printToPdf(*browser, page, printed);
    std::error_code ec;
    fs::copy_file(printed, pdf_path, fs::copy_options::overwrite_existing, ec);
    if (ec) throw ExportError("Cannot write '" + pdf_path + "': " + ec.message() + ".");
}

// NOLINTEND(concurrency-mt-unsafe)

}  // namespace hearth::report
