// ClassificationReport against scikit-learn: values and text from tests/fixtures/make_report_fixtures.py.
#include "engine/metrics/ClassificationReport.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include <stdexcept>

using hearth::ClassificationReport;

namespace {

QString fixtureDir() { return QStringLiteral(HEARTH_FIXTURES_DIR "/classification_report"); }

QJsonObject loadFixture(const QString& name) {
    QFile file(fixtureDir() + "/" + name);
    if (!file.open(QIODevice::ReadOnly)) qFatal("cannot open fixture %s", qPrintable(name));
    return QJsonDocument::fromJson(file.readAll()).object();
}

std::vector<int64_t> ints(const QJsonValue& v) {
    std::vector<int64_t> out;
    for (const auto& x : v.toArray()) out.push_back(static_cast<int64_t>(x.toDouble()));
    return out;
}

std::vector<double> doubles(const QJsonValue& v) {
    std::vector<double> out;
    for (const auto& x : v.toArray()) out.push_back(x.toDouble());
    return out;
}

std::vector<std::string> strings(const QJsonValue& v) {
    std::vector<std::string> out;
    for (const auto& x : v.toArray()) out.push_back(x.toString().toStdString());
    return out;
}

ClassificationReport computeFor(const QJsonObject& f) {
    return ClassificationReport::compute(ints(f["y_true"]), ints(f["y_pred"]), strings(f["class_names"]));
}

void compareClose(const std::vector<double>& actual, const std::vector<double>& expected, const char* what) {
    QCOMPARE(actual.size(), expected.size());
    for (size_t i = 0; i < actual.size(); ++i)
        QVERIFY2(std::abs(actual[i] - expected[i]) <= 1e-12,
                 qPrintable(QStringLiteral("%1[%2]: %3 vs sklearn %4")
                                .arg(what).arg(i).arg(actual[i], 0, 'g', 17).arg(expected[i], 0, 'g', 17)));
}

void addFixtureRows() {
    QTest::addColumn<QString>("fixture");
    const QStringList files = QDir(fixtureDir()).entryList({"*.json"}, QDir::Files, QDir::Name);
    QVERIFY2(files.size() >= 6, "the sklearn fixtures are missing");
    for (const QString& f : files) QTest::newRow(qPrintable(f)) << f;
}

}  // namespace

class TestClassificationReport : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void valuesMatchSklearn_data() { addFixtureRows(); }
    void valuesMatchSklearn() {
        QFETCH(QString, fixture);
        const QJsonObject f = loadFixture(fixture);
        const ClassificationReport r = computeFor(f);
        compareClose(r.precision, doubles(f["precision"]), "precision");
        compareClose(r.recall, doubles(f["recall"]), "recall");
        compareClose(r.f1, doubles(f["f1"]), "f1");
        QCOMPARE(r.support, ints(f["support"]));
        compareClose({r.accuracy, r.macro_precision, r.macro_recall, r.macro_f1, r.weighted_precision,
                      r.weighted_recall, r.weighted_f1},
                     {f["accuracy"].toDouble(), f["macro_precision"].toDouble(), f["macro_recall"].toDouble(),
                      f["macro_f1"].toDouble(), f["weighted_precision"].toDouble(),
                      f["weighted_recall"].toDouble(), f["weighted_f1"].toDouble()},
                     "accuracy/macro/weighted");
        QCOMPARE(r.total, static_cast<int64_t>(f["y_true"].toArray().size()));
        const QJsonArray rows = f["confusion"].toArray();
        QCOMPARE(r.confusion.size(), static_cast<size_t>(rows.size()));
        for (int t = 0; t < rows.size(); ++t) QCOMPARE(r.confusion[static_cast<size_t>(t)], ints(rows[t]));
    }

    void textMatchesSklearnByteForByte_data() { addFixtureRows(); }
    void textMatchesSklearnByteForByte() {
        QFETCH(QString, fixture);
        const QJsonObject f = loadFixture(fixture);
        const std::string expected = f["text"].toString().toStdString();
        const std::string actual = computeFor(f).toText(4);
        if (actual != expected)
            qWarning("expected:\n%s\nactual:\n%s", expected.c_str(), actual.c_str());
        QCOMPARE(QString::fromStdString(actual), QString::fromStdString(expected));
    }

    void classAbsentEverywhereTurnsAccuracyIntoMicroAvg() {
        const std::string text = computeFor(loadFixture("absent_everywhere.json")).toText();
        QVERIFY(text.find("   micro avg ") != std::string::npos);
        QVERIFY(text.find("accuracy") == std::string::npos);
    }

    void neverPredictedClassHasZeroPrecisionAndF1() {
        const ClassificationReport r = computeFor(loadFixture("never_predicted.json"));
        QCOMPARE(r.precision[2], 0.0);
        QCOMPARE(r.f1[2], 0.0);
        QVERIFY(r.support[2] > 0);
    }

    void jsonRoundTripKeepsEveryValue() {
        const ClassificationReport r = computeFor(loadFixture("balanced.json"));
        const ClassificationReport back = ClassificationReport::fromJson(r.toJson());
        QCOMPARE(back.class_names, r.class_names);
        QCOMPARE(back.precision, r.precision);
        QCOMPARE(back.recall, r.recall);
        QCOMPARE(back.f1, r.f1);
        QCOMPARE(back.support, r.support);
        QCOMPARE(back.confusion, r.confusion);
        QCOMPARE(back.accuracy, r.accuracy);
        QCOMPARE(back.weighted_f1, r.weighted_f1);
        QCOMPARE(back.macro_recall, r.macro_recall);
        QCOMPARE(back.total, r.total);
        QCOMPARE(back.toText(), r.toText());
    }

    void fromJsonRejectsInconsistentArrays() {
        ClassificationReport r = computeFor(loadFixture("binary.json"));
        r.precision.pop_back();
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, ClassificationReport::fromJson(r.toJson()));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, ClassificationReport::fromJson("{not json"));
    }

    void computeRejectsBadInput() {
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 ClassificationReport::compute({0, 1}, {0}, {"a", "b"}));
        QVERIFY_THROWS_EXCEPTION(std::out_of_range,
                                 ClassificationReport::compute({0, 2}, {0, 1}, {"a", "b"}));
    }

    void confusionTextAlignsCountsUnderClassNames() {
        const ClassificationReport r =
            ClassificationReport::compute({0, 0, 1, 1, 1, 2}, {0, 1, 1, 1, 2, 2}, {"cat", "dog", "bird"});
        const std::string expected =
            "true \\ predicted   cat   dog  bird\n"
            "cat                  1     1     0\n"
            "dog                  0     2     1\n"
            "bird                 0     0     1\n";
        QCOMPARE(QString::fromStdString(r.confusionText()), QString::fromStdString(expected));
    }
};

QTEST_APPLESS_MAIN(TestClassificationReport)
#include "test_classification_report.moc"
