// inputProblems: every path a config reads that is not on this machine or not of the kind read
// there, one issue per key, found before a job stores anything (the CLI) or at its field (the form).
#include "engine/config/ExperimentConfig.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace hearth;

namespace {

std::string messageFor(const std::vector<ConfigIssue>& issues, const std::string& key) {
    for (const auto& issue : issues)
        if (issue.key == key) return issue.message;
    return "";
}

}  // namespace

class TestInputProblems : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    std::string m_folder;
    std::string m_file;

private Q_SLOTS:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        m_folder = m_dir.filePath("images").toStdString();
        QVERIFY(QDir().mkpath(QString::fromStdString(m_folder)));
        m_file = m_dir.filePath("train.csv").toStdString();
        QFile f(QString::fromStdString(m_file));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("a,label\n1,x\n");
    }

    void pathsThatAreThereOfTheirKindPass() {
        ExperimentConfig idx;
        idx.data.path = m_folder;
        QVERIFY(inputProblems(idx).empty());
        ExperimentConfig csv;
        csv.data.kind = "csv";
        csv.data.path = m_file;
        csv.data.val_path = m_file;
        QVERIFY(inputProblems(csv).empty());
        ExperimentConfig wordnet;   // a file or its folder
        wordnet.data.kind = "wordnet";
        wordnet.data.path = m_folder;
        QVERIFY(inputProblems(wordnet).empty());
    }

    // Every missing path at once, each under its key; a relative one says where it starts.
    void everyMissingPathIsNamed() {
        ExperimentConfig c;
        c.data.kind = "text_csv";
        c.data.path = m_dir.filePath("gone.csv").toStdString();
        c.data.test_path = "relative/test.csv";
        c.data.tokenizer = m_dir.filePath("vocab.txt").toStdString();
        c.model.name = "distilbert";
        c.model.pretrained = m_dir.filePath("checkpoint").toStdString();
        const auto issues = inputProblems(c);
        QCOMPARE(issues.size(), size_t(4));
        QCOMPARE(messageFor(issues, "data.path"), "no such file or folder: " + c.data.path);
        QVERIFY2(messageFor(issues, "data.test_path").find("relative/test.csv (relative to " + QDir::currentPath().toStdString() + ")") != std::string::npos,
                 messageFor(issues, "data.test_path").c_str());
        QVERIFY(!messageFor(issues, "data.tokenizer").empty());
        QVERIFY(!messageFor(issues, "model.pretrained").empty());
        QVERIFY(messageFor(issues, "data.val_path").empty());   // not set: split off

    }

    // A folder where one file is read, a file where a folder is: said with the kind that reads it.
    void aPathOfTheWrongKindIsNamedWithWhatReadsIt() {
        ExperimentConfig csv;
        csv.data.kind = "csv";
        csv.data.path = m_folder;
        csv.data.val_path = m_folder;
        auto issues = inputProblems(csv);
        QCOMPARE(issues.size(), size_t(2));
        QVERIFY2(messageFor(issues, "data.path") == m_folder + " is a folder; csv data is one CSV file (a folder of "
                                                               "class subfolders is data.kind image_folder, a folder "
                                                               "of IDX files data.kind idx)",
                 messageFor(issues, "data.path").c_str());
        QVERIFY(messageFor(issues, "data.val_path").find("is a folder") != std::string::npos);

        ExperimentConfig idx;
        idx.data.path = m_file;
        QVERIFY2(messageFor(inputProblems(idx), "data.path").find(m_file + " is a file; idx data is the folder") == 0,
                 messageFor(inputProblems(idx), "data.path").c_str());
        ExperimentConfig images;
        images.data.kind = "image_folder";
        images.data.path = m_file;
        QVERIFY(messageFor(inputProblems(images), "data.path").find("class subfolders") != std::string::npos);

        ExperimentConfig scripted;
        scripted.model.name = "torchscript";
        scripted.model.path = m_folder;
        scripted.data.path = m_folder;
        QCOMPARE(messageFor(inputProblems(scripted), "model.path"),
                 m_folder + " is a folder; a TorchScript module is one file (torch.jit.save)");
        // model.path is read only by the torchscript model.
        scripted.model.name = "cnn";
        QVERIFY(inputProblems(scripted).empty());
    }
};

QTEST_GUILESS_MAIN(TestInputProblems)
#include "test_input_problems.moc"
