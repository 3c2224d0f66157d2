// ExperimentPanel: the form mirrors ExperimentConfig, flags problems in place with the CLI's
// messages, blocks Start while invalid, and reads/writes the CLI's JSON files.
#include "UiTestSupport.h"

#include "engine/config/ConfigSchema.h"
#include "engine/config/DeviceInfo.h"
#include "ui/experiment/ExperimentForm.h"
#include "ui/experiment/ExperimentPanel.h"
#include "ui/session/MetaTypes.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTest>

using hearth::ui::ExperimentPanel;

namespace {

std::string messageFor(const hearth::ExperimentConfig& c, const std::string& key)
{
    for (const auto& issue : hearth::validate(c, hearth::queryDeviceCapabilities()))
        if (issue.key == key)
            return issue.message;
    return {};
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
        c.trainer.strategy = "zero3";
        strategy.form()->setConfig(c);
        QVERIFY(!strategy.isValid());
        QVERIFY2(strategy.form()->fieldMessage("trainer.strategy").contains(QStringLiteral("zero3")),
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
        QCOMPARE(items(field<QComboBox>(panel, "trainer.strategy")), (QStringList{"auto", "ddp", "zero1", "zero2"}));
        // A config file asking for what is not offered still shows it, and validation names it.
        auto c = panel.config();
        c.trainer.strategy = "ddp";
        panel.form()->setConfig(c);
        QCOMPARE(field<QComboBox>(panel, "trainer.strategy")->currentData().toString(), QString("ddp"));
        QCOMPARE(panel.config().trainer.strategy, std::string("ddp"));
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
        // DDP zeroes gradients in place (its buckets): the toggle does not apply.
        QVERIFY(!field<QCheckBox>(panel, "trainer.set_grads_to_none")->isEnabled());
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
};

QTEST_MAIN(TestExperimentPanel)
#include "test_experiment_panel.moc"
