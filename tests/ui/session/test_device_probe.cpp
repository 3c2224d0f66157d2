// DeviceProbe: the workbench asks what the machine offers once per process, on a pool thread
// (never on the GUI thread); the window and the experiment panel start with CPU-only assumptions
// and update when the answer comes.
#include "UiTestSupport.h"

#include "ui/MainWindow.h"
#include "ui/experiment/ExperimentForm.h"
#include "ui/experiment/ExperimentPanel.h"
#include "ui/session/DeviceProbe.h"
#include "ui/session/LadderRunner.h"
#include "ui/session/MetaTypes.h"

#include <QComboBox>
#include <QLabel>
#include <QSemaphore>
#include <QTest>
#include <QThread>

#include <atomic>
#include <memory>

using namespace hearth::ui;

class TestDeviceProbe : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    // Shared with the probe, which runs on a pool thread.
    std::shared_ptr<std::atomic<int>> m_calls = std::make_shared<std::atomic<int>>(0);
    std::shared_ptr<std::atomic<QThread*>> m_thread = std::make_shared<std::atomic<QThread*>>(nullptr);
    std::shared_ptr<QSemaphore> m_answer = std::make_shared<QSemaphore>();

private Q_SLOTS:
    void initTestCase()
    {
        hearth::test::isolateSettings(m_dir);
        registerMetaTypes();
        // Two GPUs; the answer waits (at most 10 s) until the test lets it go.
        DeviceProbe::setProbe([calls = m_calls, thread = m_thread, answer = m_answer] {
            ++*calls;
            thread->store(QThread::currentThread());
            answer->tryAcquire(1, 10000);
            hearth::DeviceCapabilities caps;
            caps.cuda_available = true;
            caps.cuda_device_count = 2;
            caps.cuda_bf16 = true;
            caps.cuda_device_names = {"Test GPU", "Test GPU"};
            return caps;
        });
    }

    void theWindowAsksOnceOffTheGuiThreadAndUpdatesWhenTheAnswerComes()
    {
        MainWindow window({m_dir.filePath(QStringLiteral("runs.sqlite")), QString(), {}});
        auto* devices = window.findChild<QLabel*>(QStringLiteral("deviceStatus"));
        QVERIFY(devices);
        QCOMPARE(devices->text(), QStringLiteral("Probing devices…"));
        ExperimentForm* form = window.experimentPanel()->form();
        auto* capabilities = form->findChild<QLabel*>(QStringLiteral("capabilities"));
        QVERIFY2(capabilities->text().contains(QStringLiteral("Probing")), qPrintable(capabilities->text()));
        auto* accelerator = form->findChild<QComboBox*>(QStringLiteral("trainer.accelerator"));
        QCOMPARE(accelerator->findData(QStringLiteral("cuda")), -1);   // CPU-only until the answer
        QVERIFY(window.experimentPanel()->isValid());
        // A ladder is planned for the devices: not on the CPU-only assumption.
        QString error;
        QVERIFY(!window.ladderRunner()->start(window.experimentPanel()->config(), std::nullopt, &error));
        QVERIFY2(error.contains(QStringLiteral("still being probed")), qPrintable(error));

        m_answer->release();
        QTRY_COMPARE(devices->text(), QStringLiteral("2 CUDA device(s)"));
        QVERIFY(DeviceProbe::instance().isReady());
        QVERIFY2(capabilities->text().contains(QStringLiteral("cuda:1 Test GPU")), qPrintable(capabilities->text()));
        QVERIFY(accelerator->findData(QStringLiteral("cuda")) >= 0);
        QVERIFY(m_thread->load() != nullptr);
        QVERIFY(m_thread->load() != QThread::currentThread());
        QCOMPARE(m_calls->load(), 1);

        // A panel made afterwards has the answer at once, without asking again.
        ExperimentPanel later;
        QVERIFY(later.form()->findChild<QComboBox*>(QStringLiteral("trainer.accelerator"))->findData(QStringLiteral("cuda")) >= 0);
        QCOMPARE(m_calls->load(), 1);
    }
};

QTEST_MAIN(TestDeviceProbe)
#include "test_device_probe.moc"
