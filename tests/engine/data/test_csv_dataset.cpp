// CSV parsing (RFC 4180) and the tabular dataset: quoting, CRLF, errors with file:line, labels,
// and standardisation with training statistics only.
#include "engine/data/CsvDataset.h"
#include "engine/data/DataError.h"
#include "engine/data/DataModule.h"
#include "engine/data/formats/CsvReader.h"
#include "engine/data/formats/TextEncoding.h"
#include "engine/run/DataInputs.h"

#include <QTemporaryDir>
#include <QtTest>

#include <fstream>

using hearth::CsvDataset;
using hearth::DataError;
using hearth::parseCsv;

namespace {

template <typename F>
QString dataErrorOf(F&& load) {
    try {
        load();
    } catch (const DataError& e) {
        return QString::fromStdString(e.what());
    }
    return QStringLiteral("<no DataError thrown>");
}

#define VERIFY_CONTAINS(haystack, needle) \
    QVERIFY2((haystack).contains(needle), qPrintable(QStringLiteral("'%1' lacks '%2'").arg(haystack, needle)))

const std::string kFixtures = HEARTH_FIXTURES_DIR "/data";

}  // namespace

class TestCsvDataset : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    std::string write(const char* name, const std::string& text) {
        const std::string p = (m_dir.path() + "/" + name).toStdString();
        std::ofstream(p, std::ios::binary) << text;
        return p;
    }

private Q_SLOTS:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    // The header alone, from the file's start: a malformed row further down does not matter, a
    // byte order mark is not part of the first name, a quoted name may hold a comma; a header
    // longer than the look is unknown rather than cut short.
    void readsTheHeaderAloneFromTheStart() {
        const auto header = hearth::readCsvHeader(write("h.csv", "\xEF\xBB\xBF" "id,\"notes, free\",label\r\n1,2,x\n3,4\n"));
        QVERIFY(header.has_value());
        QCOMPARE(*header, (std::vector<std::string>{"id", "notes, free", "label"}));
        QCOMPARE(*hearth::readCsvHeader(write("one.csv", "only")), std::vector<std::string>{"only"});
        const std::string wide(70 * 1024, 'w');
        QVERIFY(!hearth::readCsvHeader(write("wide.csv", "a," + wide + "\n1,2\n")).has_value());
        VERIFY_CONTAINS(dataErrorOf([&] { hearth::readCsvHeader(write("empty.csv", "")); }), QStringLiteral("empty file"));
        VERIFY_CONTAINS(dataErrorOf([&] { hearth::readCsvHeader(m_dir.filePath("absent.csv").toStdString()); }),
                        QStringLiteral("cannot open"));
    }

    // The columns a config reads, checked against each file's header before anything loads: each
    // missing one is an issue of its key, naming the file; files that are not there are left to
    // inputProblems (one issue, not two).
    void dataInputProblemsNameMissingColumnsBeforeLoading() {
        hearth::ExperimentConfig c;
        c.data.kind = "csv";
        c.data.path = write("train.csv", "x,y,Label\n1,2,a\n1,2,3,4\n");   // the bad row is the load's to find
        c.data.test_path = write("test.csv", "x,y,label\n1,2,a\n");
        c.data.val_path = m_dir.filePath("no-such-val.csv").toStdString();
        auto issues = hearth::dataInputProblems(c);
        QCOMPARE(issues.size(), size_t{2});
        QCOMPARE(QString::fromStdString(issues[0].key), QStringLiteral("data.val_path"));
        QCOMPARE(QString::fromStdString(issues[1].key), QStringLiteral("data.label_column"));
        QCOMPARE(QString::fromStdString(issues[1].message),
                 QString::fromStdString(c.data.path + ": no label column 'label' (did you mean 'Label'?); the columns are [x, y, Label]"));
        c.data.val_path.reset();
        c.data.label_column = "Label";   // now train.csv has it and test.csv does not
        issues = hearth::dataInputProblems(c);
        QCOMPARE(issues.size(), size_t{1});
        VERIFY_CONTAINS(QString::fromStdString(issues[0].message), QStringLiteral("test.csv: no label column 'Label' (did you mean 'label'?)"));

        c.data.kind = "text_csv";
        c.data.path = write("texts.csv", "review,label\n\"good\",pos\n");
        c.data.test_path.reset();
        c.data.label_column = "label";
        issues = hearth::dataInputProblems(c);   // text_column is "text"
        QCOMPARE(issues.size(), size_t{1});
        QCOMPARE(QString::fromStdString(issues[0].key), QStringLiteral("data.text_column"));
        c.data.text_column = "review";
        QVERIFY(hearth::dataInputProblems(c).empty());
        c.data.kind = "idx";   // no header to read: inputProblems alone
        c.data.path = m_dir.path().toStdString();
        QVERIFY(hearth::dataInputProblems(c).empty());
    }

    void parsesQuotesDoubledQuotesNewlinesAndCrlf() {
        const std::string text =
            "name,\"notes, free\",score\r\n"
            "\"Smith, J.\",\"said \"\"hi\"\"\nand left\",1.5\r\n"
            "\r\n"
            "Doe,,2.5\r\n"
            "\"\",plain,3";
        const hearth::CsvTable t = parseCsv(text, "q.csv");
        QCOMPARE(t.header, (std::vector<std::string>{"name", "notes, free", "score"}));
        QCOMPARE(t.records.size(), size_t{3});
        QCOMPARE(t.records[0].fields,
                 (std::vector<std::string>{"Smith, J.", "said \"hi\"\nand left", "1.5"}));
        QCOMPARE(t.records[0].line, int64_t{2});
        // The quoted newline spans line 3; an empty line 4 is skipped; Doe is on line 5.
        QCOMPARE(t.records[1].fields, (std::vector<std::string>{"Doe", "", "2.5"}));
        QCOMPARE(t.records[1].line, int64_t{5});
        QCOMPARE(t.records[2].fields, (std::vector<std::string>{"", "plain", "3"}));
    }

    // Excel on Windows saves "café" as the single byte 0xE9: such a file is read as Windows-1252
    // and says so; a UTF-8 file is read as it is.
    void nonUtf8FileIsReadAsWindows1252AndSaysSo() {
        const auto latin =
            CsvDataset::load(write("cp1252.csv", "x,label\n1,caf\xe9\n2,na\xefve\n3,\x80uro\n"), "label");
        QCOMPARE(latin->classNames(), (std::vector<std::string>{"café", "naïve", "€uro"}));
        VERIFY_CONTAINS(QString::fromStdString(latin->encodingNote()), QStringLiteral("cp1252.csv is not valid UTF-8"));
        VERIFY_CONTAINS(QString::fromStdString(latin->encodingNote()), QStringLiteral("Windows-1252"));
        const auto utf8 = CsvDataset::load(write("utf8.csv", "x,label\n1,café\n2,日本\n"), "label");
        QCOMPARE(utf8->classNames(), (std::vector<std::string>{"café", "日本"}));
        QVERIFY(utf8->encodingNote().empty());
    }

    void utf8ValidationRejectsMalformedSequences() {
        QVERIFY(hearth::isValidUtf8("plain ascii, café, 日本, \xf0\x9f\x98\x80"));
        QVERIFY(!hearth::isValidUtf8("caf\xe9"));           // a lone Latin-1 byte
        QVERIFY(!hearth::isValidUtf8("\xc0\xaf"));          // overlong '/'
        QVERIFY(!hearth::isValidUtf8("\xed\xa0\x80"));      // a UTF-16 surrogate
        QVERIFY(!hearth::isValidUtf8("\xf4\x90\x80\x80"));  // beyond U+10FFFF
        QVERIFY(!hearth::isValidUtf8("\xe6\x97"));          // truncated
        QCOMPARE(hearth::windows1252ToUtf8("\x93q\x94 \x81"), std::string("\u201cq\u201d \u0081"));
    }

    void wrongFieldCountNamesFileAndLine() {
        const std::string p = kFixtures + "/broken_row.csv";
        QCOMPARE(dataErrorOf([&] { hearth::readCsvFile(p); }),
                 QString::fromStdString(p + ":4: expected 4 fields, found 3"));
    }

    void nonNumericCellNamesLineAndColumn() {
        const std::string p = kFixtures + "/broken_number.csv";
        QCOMPARE(dataErrorOf([&] { CsvDataset::load(p, "label"); }),
                 QString::fromStdString(p + ":3, column 'income': 'abc' is not a number"));
        VERIFY_CONTAINS(dataErrorOf([&] { CsvDataset(parseCsv("a,label\nnan,x\n", "n.csv"), "label"); }),
                        "n.csv:2, column 'a': 'nan' is not a finite number");
    }

    void emptyFileAndUnterminatedQuoteAreErrors() {
        const std::string empty = write("empty.csv", "");
        QCOMPARE(dataErrorOf([&] { hearth::readCsvFile(empty); }),
                 QString::fromStdString(empty + ": empty file (a header row is required)"));
        VERIFY_CONTAINS(dataErrorOf([&] { parseCsv("a,b\n1,2\n3,\"open\n4,5\n", "u.csv"); }),
                        "u.csv:3: unterminated quoted field");
        VERIFY_CONTAINS(dataErrorOf([&] { parseCsv("a,b\n\"x\"y,2\n", "s.csv"); }),
                        "s.csv:2: unexpected character 'y' after a closing quote");
        VERIFY_CONTAINS(dataErrorOf([&] { hearth::readCsvFile(m_dir.path().toStdString() + "/nope.csv"); }),
                        "nope.csv: no such file");
        QCOMPARE(dataErrorOf([&] { hearth::readCsvFile(m_dir.path().toStdString()); }),
                 m_dir.path() + ": is a folder, not a CSV file");
    }

    void duplicateColumnsAndEmptyLabelsAreRejected() {
        QCOMPARE(dataErrorOf([&] { CsvDataset(parseCsv("a,b,a,label\n1,2,3,x\n", "d.csv"), "label"); }),
                 QStringLiteral("d.csv:1: column 'a' appears twice in the header"));
        QCOMPARE(dataErrorOf([&] { CsvDataset(parseCsv("a,label\n1,x\n2, \n", "e.csv"), "label"); }),
                 QStringLiteral("e.csv:3, column 'label': the label is empty"));
    }

    void missingLabelColumnListsTheColumns() {
        const std::string p = kFixtures + "/iris.csv";
        QCOMPARE(dataErrorOf([&] { CsvDataset::load(p, "label"); }),
                 QString::fromStdString(p + ": no label column 'label'; the columns are [sepal_length, "
                                            "sepal_width, petal_length, petal_width, species] (data.label_column)"));
        // A near miss names the column likely meant.
        QVERIFY(dataErrorOf([&] { CsvDataset::load(p, "Species"); }).contains(QStringLiteral("no label column 'Species' (did you mean 'species'?)")));
    }

    void irisHasSortedClassNamesAndFeatureRows() {
        auto iris = CsvDataset::load(kFixtures + "/iris.csv", "species");
        QCOMPARE(iris->size(), int64_t{150});
        QCOMPARE(iris->sampleShape(), (std::vector<int64_t>{4}));
        QCOMPARE(iris->classNames(), (std::vector<std::string>{"setosa", "versicolor", "virginica"}));
        QCOMPARE(iris->labelIndex().at("virginica"), int64_t{2});
        QCOMPARE(iris->label(0), int64_t{0});
        QCOMPARE(iris->label(149), int64_t{2});
        QCOMPARE(iris->describe(0),
                 std::string("sepal_length=5.1, sepal_width=3.5, petal_length=1.4, petal_width=0.2, species=setosa"));
        const hearth::Batch b = iris->getBatch({0, 149});
        QCOMPARE(b.input().sizes().vec(), (std::vector<int64_t>{2, 4}));
        QVERIFY(std::abs(b.input()[0][0].item<double>() - 5.1) < 1e-6);   // not standardised yet
        QCOMPARE(b.label()[1].item<int64_t>(), int64_t{2});
    }

    void numericLabelsSortNumerically() {
        CsvDataset d(parseCsv("x,y\n1,10\n2,9\n3,-1\n4,10\n5,2.5\n", "n.csv"), "y");
        QCOMPARE(d.classNames(), (std::vector<std::string>{"-1", "2.5", "9", "10"}));
        QCOMPARE(d.label(0), int64_t{3});
        QCOMPARE(d.label(2), int64_t{0});
        CsvDataset s(parseCsv("x,y\n1,b10\n2,b9\n", "s.csv"), "y");
        QCOMPARE(s.classNames(), (std::vector<std::string>{"b10", "b9"}));
    }

    void standardisationUsesOnlyTheRowsGiven() {
        CsvDataset d(parseCsv("x,c,label\n1,7,a\n3,7,b\n100,7,a\n", "s.csv"), "label");
        const hearth::FeatureScaling s = d.computeScaling({0, 1});
        QCOMPARE(s.mean[0], 2.0);
        QCOMPARE(s.std[0], 1.0);   // population std of {1, 3}
        QCOMPARE(s.std[1], 1.0);   // a constant feature keeps std 1 instead of 0
        d.standardize(s);
        QCOMPARE(d.get(0).input[0].item<float>(), -1.0f);
        QCOMPARE(d.get(2).input[0].item<float>(), 98.0f);
        QCOMPARE(d.get(2).input[1].item<float>(), 0.0f);
    }

    void splitsStandardiseWithTrainingStatisticsOnly() {
        std::string train = "f,label\n", val = "f,label\n";
        for (int i = 0; i < 20; ++i) train += std::to_string(i) + "," + (i % 2 ? "odd" : "even") + "\n";
        val += "1000,odd\n2000,even\n";
        hearth::DataConfig config;
        config.kind = "csv";
        config.path = write("train.csv", train);
        config.val_path = write("val.csv", val);
        config.test_fraction = 0.25;
        const hearth::DataSplits s = hearth::loadDataSplits(config, 7);
        QCOMPARE(s.train->size(), int64_t{15});
        QCOMPARE(s.test->size(), int64_t{5});
        QCOMPARE(s.val->size(), int64_t{2});
        // The mean of the 15 training rows' features (after standardisation) is 0, std 1 ...
        const hearth::Batch tb = s.train->getBatch({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14});
        QVERIFY(std::abs(tb.input().mean().item<double>()) < 1e-5);
        QVERIFY(std::abs(tb.input().std(/*unbiased=*/false).item<double>() - 1.0) < 1e-5);
        // ... and the validation rows are scaled with those statistics, not their own.
        std::vector<double> train_values;
        for (int64_t i = 0; i < s.train->size(); ++i) train_values.push_back(std::stod(
            s.train->describe(i).substr(2, s.train->describe(i).find(',') - 2)));
        double mean = 0, var = 0;
        for (double v : train_values) mean += v / 15.0;
        for (double v : train_values) var += (v - mean) * (v - mean) / 15.0;
        QVERIFY(std::abs(s.val->get(0).input[0].item<double>() - (1000 - mean) / std::sqrt(var)) < 1e-3);
        QCOMPARE(s.class_names, (std::vector<std::string>{"even", "odd"}));
        QCOMPARE(s.description, std::string("CSV train.csv 15/2/5 samples, 1 features, 2 classes"));
    }

    void companionFilesMustMatchHeaderAndLabels() {
        hearth::DataConfig config;
        config.kind = "csv";
        config.path = write("t.csv", "a,b,label\n1,2,x\n3,4,y\n5,6,x\n7,8,y\n9,1,x\n");
        config.val_path = write("v-header.csv", "b,a,label\n1,2,x\n");
        VERIFY_CONTAINS(dataErrorOf([&] { hearth::loadDataSplits(config, 1); }),
                        "v-header.csv: header [b, a, label] differs from");
        config.val_path = write("v-label.csv", "a,b,label\n1,2,x\n1,2,z\n");
        VERIFY_CONTAINS(dataErrorOf([&] { hearth::loadDataSplits(config, 1); }),
                        "v-label.csv:3, column 'label': label 'z' does not occur in the training data");
    }
};

QTEST_APPLESS_MAIN(TestCsvDataset)
#include "test_csv_dataset.moc"
