#include "ui/experiment/ExperimentForm.h"

#include "ui/widgets/Format.h"
#include "ui/widgets/ValidatedField.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QSpinBox>
#include <QToolButton>
#include <QVBoxLayout>

#include <limits>

namespace hearth::ui {

ExperimentForm::ExperimentForm(QWidget* parent) : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(buildGeneral());
    layout->addWidget(buildData());
    layout->addWidget(buildModel());
    layout->addWidget(buildOptimization());
    layout->addWidget(buildSpeed());
    layout->addWidget(buildDevices());
    layout->addStretch(1);
    setConfig(hearth::ExperimentConfig{});
}

QFormLayout* ExperimentForm::newGroup(const QString& title, QWidget** group)
{
    auto* box = new QGroupBox(title, this);
    auto* form = new QFormLayout(box);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    form->setRowWrapPolicy(QFormLayout::DontWrapRows);
    *group = box;
    return form;
}

void ExperimentForm::addField(QFormLayout* form, const std::string& key, const QString& label, QWidget* editor,
                              const QString& toolTip, QWidget* frame)
{
    const QString dotted = QString::fromStdString(key);
    if (editor->objectName().isEmpty())
        editor->setObjectName(dotted);
    auto* field = new ValidatedField(editor, frame ? frame : editor, toolTip + QStringLiteral("\n(%1)").arg(dotted));
    m_fields[key] = field;
    form->addRow(label, field);
}

QLineEdit* ExperimentForm::addText(QFormLayout* form, const std::string& key, const QString& label,
                                   const QString& tip, const QString& placeholder)
{
    auto* edit = new QLineEdit;
    edit->setPlaceholderText(placeholder);
    m_texts[key] = edit;
    connect(edit, &QLineEdit::textChanged, this, &ExperimentForm::onEdited);
    addField(form, key, label, edit, tip);
    return edit;
}

QSpinBox* ExperimentForm::addInt(QFormLayout* form, const std::string& key, const QString& label, int min, int max,
                                 const QString& tip)
{
    auto* spin = new QSpinBox;
    spin->setRange(min, max);
    spin->setAccelerated(true);
    m_ints[key] = spin;
    connect(spin, &QSpinBox::valueChanged, this, &ExperimentForm::onEdited);
    addField(form, key, label, spin, tip);
    return spin;
}

QDoubleSpinBox* ExperimentForm::addFraction(QFormLayout* form, const std::string& key, const QString& label,
                                            const QString& tip)
{
    auto* spin = new QDoubleSpinBox;
    // Up to 1 inclusive so that an impossible value can be typed and explained, not silently clamped.
    spin->setRange(0.0, 1.0);
    spin->setDecimals(4);
    spin->setSingleStep(0.05);
    m_fractions[key] = spin;
    connect(spin, &QDoubleSpinBox::valueChanged, this, &ExperimentForm::onEdited);
    addField(form, key, label, spin, tip);
    return spin;
}

QComboBox* ExperimentForm::addChoice(QFormLayout* form, const std::string& key, const QString& label,
                                     const QStringList& values, const QString& tip)
{
    auto* combo = new QComboBox;
    for (const QString& v : values)
        combo->addItem(v, v);
    m_choices[key] = combo;
    connect(combo, &QComboBox::currentIndexChanged, this, &ExperimentForm::onEdited);
    addField(form, key, label, combo, tip);
    return combo;
}

QCheckBox* ExperimentForm::addFlag(QFormLayout* form, const std::string& key, const QString& text, const QString& tip)
{
    auto* check = new QCheckBox(text);
    m_flags[key] = check;
    connect(check, &QCheckBox::toggled, this, &ExperimentForm::onEdited);
    addField(form, key, QString(), check, tip);
    return check;
}

QLineEdit* ExperimentForm::addPath(QFormLayout* form, const std::string& key, const QString& label,
                                   const QString& tip, bool folderChoice)
{
    auto* row = new QWidget;
    row->setObjectName(QString::fromStdString(key) + QStringLiteral("/row"));
    auto* h = new QHBoxLayout(row);
    h->setContentsMargins(0, 0, 0, 0);
    auto* edit = new QLineEdit;
    edit->setObjectName(QString::fromStdString(key));
    edit->setPlaceholderText(folderChoice ? tr("folder or CSV file") : tr("none"));
    auto* button = new QToolButton;
    button->setText(tr("…"));
    button->setToolTip(tr("Choose…"));
    if (folderChoice) {
        auto* menu = new QMenu(button);
        menu->addAction(tr("IDX Folder…"), this, [this, key] { browse(key, true); });
        menu->addAction(tr("CSV File…"), this, [this, key] { browse(key, false); });
        button->setMenu(menu);
        button->setPopupMode(QToolButton::InstantPopup);
    } else {
        connect(button, &QToolButton::clicked, this, [this, key] { browse(key, false); });
    }
    h->addWidget(edit, 1);
    h->addWidget(button);
    m_texts[key] = edit;
    connect(edit, &QLineEdit::textChanged, this, &ExperimentForm::onEdited);
    addField(form, key, label, row, tip, edit);
    edit->setToolTip(tip);
    return edit;
}

QWidget* ExperimentForm::buildGeneral()
{
    QWidget* group = nullptr;
    QFormLayout* f = newGroup(tr("Experiment"), &group);
    addText(f, "name", tr("Name"), tr("The run's name in the history."));
    addText(f, "seed", tr("Seed"), tr("Seeds the split, the model's initial weights and shuffling."));
    return group;
}

QWidget* ExperimentForm::buildData()
{
    QWidget* group = nullptr;
    QFormLayout* f = newGroup(tr("Data"), &group);
    addChoice(f, "data.kind", tr("Kind"), {QStringLiteral("idx"), QStringLiteral("csv")},
              tr("idx: MNIST/Fashion-MNIST files in a folder; csv: a table with a label column."));
    addPath(f, "data.path", tr("Source"), tr("idx: the folder with the *-idx?-ubyte(.gz) files; csv: the training "
                                             "file. Drop a folder or CSV file onto the window to set it."), true);
    addPath(f, "data.val_path", tr("Validation file"), tr("csv only: an explicit validation file "
                                                          "(empty: split off data.val_fraction)."), false);
    addPath(f, "data.test_path", tr("Test file"), tr("csv only: an explicit test file "
                                                     "(empty: split off data.test_fraction)."), false);
    addText(f, "data.label_column", tr("Label column"), tr("csv only: the column holding the class label."));
    addFraction(f, "data.val_fraction", tr("Validation share"), tr("Share of the training data held out for "
                                                                    "validation."));
    addFraction(f, "data.test_fraction", tr("Test share"), tr("csv without a test file: share held out for test."));
    QSpinBox* limit = addInt(f, "data.limit", tr("Limit"), 0, std::numeric_limits<int>::max(),
                             tr("Use only the first N training samples (validation and test scaled alike) "
                                "for quick experiments."));
    limit->setSpecialValueText(tr("all samples"));
    limit->setSingleStep(100);
    return group;
}

QWidget* ExperimentForm::buildModel()
{
    QWidget* group = nullptr;
    QFormLayout* f = newGroup(tr("Model"), &group);
    addChoice(f, "model.name", tr("Architecture"), {QStringLiteral("cnn"), QStringLiteral("mlp")},
              tr("cnn: convolution blocks for images; mlp: fully connected layers for any input."));
    addText(f, "model.hidden", tr("Hidden widths"), tr("mlp: widths of the hidden layers, e.g. 256, 128."));
    addText(f, "model.channels", tr("Channels"), tr("cnn: output channels of each convolution block (1 to 4), "
                                                    "e.g. 32, 64."));
    addFraction(f, "model.dropout", tr("Dropout"), tr("Probability of zeroing activations during training."));
    return group;
}

QWidget* ExperimentForm::buildOptimization()
{
    QWidget* group = nullptr;
    QFormLayout* f = newGroup(tr("Optimization"), &group);
    addInt(f, "trainer.max_epochs", tr("Epochs"), 0, 100000, tr("Passes over the training data."));
    addInt(f, "trainer.batch_size", tr("Batch size"), 0, 1 << 20, tr("Samples per micro-batch."));
    addChoice(f, "optimizer.name", tr("Optimizer"), {"adam", "adamw", "sgd", "adagrad"}, tr("The update rule."));
    addText(f, "optimizer.lr", tr("Learning rate"), tr("Step size, e.g. 0.001 or 1e-3."));
    addText(f, "optimizer.weight_decay", tr("Weight decay"), tr("L2 penalty (adamw: decoupled)."));
    addText(f, "optimizer.momentum", tr("Momentum"), tr("sgd only."));
    addText(f, "optimizer.beta1", tr("Beta 1"), tr("adam/adamw: decay of the first moment."));
    addText(f, "optimizer.beta2", tr("Beta 2"), tr("adam/adamw: decay of the second moment."));
    addText(f, "optimizer.eps", tr("Epsilon"), tr("adam/adamw/adagrad: added to the denominator."));
    addChoice(f, "scheduler.name", tr("LR schedule"), {"none", "step", "cosine", "linear-warmup"},
              tr("How the learning rate changes over the run."));
    addInt(f, "scheduler.step_size", tr("Step every"), 0, 100000, tr("step: epochs between decays."));
    addText(f, "scheduler.gamma", tr("Decay factor"), tr("step: multiply the learning rate by this."));
    addInt(f, "scheduler.warmup_steps", tr("Warm-up steps"), -1, 10000000, tr("linear-warmup: optimizer steps of "
                                                                               "warm-up."));
    addText(f, "scheduler.min_lr", tr("Final LR"), tr("cosine / linear-warmup: the learning rate at the end."));
    addText(f, "trainer.gradient_clip_val", tr("Clip gradients"), tr("Clip the gradient norm to this value; "
                                                                     "empty: no clipping."), tr("off"));
    addInt(f, "trainer.log_every_n_steps", tr("Log every"), 0, 100000, tr("Optimizer steps between logged "
                                                                          "metrics (plots and history)."));
    addChoice(f, "trainer.checkpoint.monitor", tr("Keep best by"), {"val_acc", "val_loss"},
              tr("The validation metric that picks the best checkpoint (tested at the end)."));
    addChoice(f, "trainer.checkpoint.mode", tr("Best is"), {"max", "min"}, tr("Whether higher or lower is better."));
    addFlag(f, "trainer.deterministic", tr("Deterministic algorithms"), tr("Reproducible results, possibly slower."));
    return group;
}

QWidget* ExperimentForm::buildSpeed()
{
    QWidget* group = nullptr;
    QFormLayout* f = newGroup(tr("Speed"), &group);
    addChoice(f, "trainer.precision", tr("Precision"), {"32-true", "16-mixed", "bf16-mixed"},
              tr("32-true: float32; 16-mixed: float16 autocast with a gradient scaler (CUDA); bf16-mixed: "
                 "bfloat16 autocast."));
    addInt(f, "trainer.accumulate_grad_batches", tr("Accumulate batches"), 0, 4096,
           tr("Micro-batches per optimizer step (a larger effective batch in the same memory)."));
    addInt(f, "trainer.num_workers", tr("Loader workers"), -1, 256, tr("Threads preparing batches; 0 loads on the "
                                                                       "training thread."));
    addInt(f, "trainer.prefetch_factor", tr("Prefetch per worker"), 0, 64, tr("Batches each worker prepares "
                                                                              "ahead."));
    addFlag(f, "trainer.persistent_workers", tr("Persistent workers"), tr("Keep loader workers between epochs."));
    addFlag(f, "trainer.pin_memory", tr("Pin memory"), tr("Page-locked host buffers for faster, asynchronous "
                                                          "copies to the GPU."));
    QSpinBox* threads = addInt(f, "trainer.num_threads", tr("CPU threads"), -1, 1024,
                               tr("LibTorch intra-op threads."));
    threads->setSpecialValueText(tr("default"));
    threads->setMinimum(0);
    addFlag(f, "trainer.cudnn_benchmark", tr("cuDNN benchmark"), tr("CUDA: let cuDNN time kernels and pick the "
                                                                    "fastest."));
    addFlag(f, "trainer.tf32", tr("TF32 matmuls"), tr("CUDA Ampere+: TensorFloat-32 for float32 matrix products."));
    addFlag(f, "trainer.channels_last", tr("Channels last"), tr("cnn: NHWC memory layout (faster convolutions on "
                                                                "tensor cores)."));
    return group;
}

QWidget* ExperimentForm::buildDevices()
{
    QWidget* group = nullptr;
    QFormLayout* f = newGroup(tr("Devices"), &group);
    m_capabilities = new QLabel(this);
    m_capabilities->setObjectName(QStringLiteral("capabilities"));
    m_capabilities->setWordWrap(true);
    f->addRow(m_capabilities);
    addChoice(f, "trainer.accelerator", tr("Accelerator"), {"auto", "cpu", "cuda"},
              tr("auto: the GPU when there is one, else the CPU."));
    addInt(f, "trainer.devices", tr("GPU count"), 0, 64, tr("Devices to train on."));
    addChoice(f, "trainer.strategy", tr("Strategy"), {"auto", "ddp", "zero1", "zero2"},
              tr("How several devices share the work."));
    return group;
}

void ExperimentForm::setCapabilities(const hearth::DeviceCapabilities& caps)
{
    QString text;
    if (!caps.cuda_available || caps.cuda_device_count == 0) {
        text = tr("No CUDA device — CPU only.");
    } else {
        QStringList names;
        for (const auto& n : caps.cuda_device_names)
            names << qstr(n);
        text = tr("%n CUDA device(s): %1", nullptr, static_cast<int>(caps.cuda_device_count)).arg(names.join(", "));
        text += caps.cuda_bf16 ? tr(" · bf16 supported") : tr(" · no bf16");
    }
    text += caps.distributed ? tr(" · distributed available") : QString();
    m_capabilities->setText(text);
}

void ExperimentForm::setDataSource(const QString& path)
{
    const QFileInfo info(path);
    setChoice("data.kind", info.isDir() ? "idx" : "csv");
    if (!info.isDir())
        setChoice("model.name", "mlp");   // a cnn needs images; tabular rows need an mlp
    setText("data.path", info.absoluteFilePath());
}

void ExperimentForm::browse(const std::string& key, bool folder)
{
    const QString current = text(key);
    QString chosen;
    if (folder)
        chosen = QFileDialog::getExistingDirectory(this, tr("Choose IDX Data Folder"), current);
    else
        chosen = QFileDialog::getOpenFileName(this, tr("Choose CSV File"), QFileInfo(current).absolutePath(),
                                              tr("CSV files (*.csv);;All files (*)"));
    if (chosen.isEmpty())
        return;
    if (key == "data.path")
        setDataSource(chosen);
    else
        setText(key, chosen);
}

void ExperimentForm::onEdited()
{
    if (m_loading)
        return;
    updateApplicability();
    Q_EMIT changed();
}

void ExperimentForm::updateApplicability()
{
    const std::string opt = choice("optimizer.name"), sched = choice("scheduler.name");
    const bool csv = choice("data.kind") == "csv";
    auto enable = [this](const std::string& key, bool on) { m_fields.at(key)->setEnabled(on); };
    enable("optimizer.momentum", opt == "sgd");
    enable("optimizer.beta1", opt == "adam" || opt == "adamw");
    enable("optimizer.beta2", opt == "adam" || opt == "adamw");
    enable("optimizer.eps", opt != "sgd");
    enable("scheduler.step_size", sched == "step");
    enable("scheduler.gamma", sched == "step");
    enable("scheduler.warmup_steps", sched == "linear-warmup");
    enable("scheduler.min_lr", sched == "cosine" || sched == "linear-warmup");
    enable("model.hidden", choice("model.name") == "mlp");
    enable("model.channels", choice("model.name") == "cnn");
    enable("data.val_path", csv);
    enable("data.test_path", csv);
    enable("data.label_column", csv);
    enable("data.test_fraction", csv && text("data.test_path").isEmpty());
    enable("trainer.prefetch_factor", m_ints.at("trainer.num_workers")->value() > 0);
}

QString ExperimentForm::text(const std::string& key) const
{
    return m_texts.at(key)->text();
}

void ExperimentForm::setText(const std::string& key, const QString& value)
{
    m_texts.at(key)->setText(value);
}

std::string ExperimentForm::choice(const std::string& key) const
{
    return m_choices.at(key)->currentData().toString().toStdString();
}

void ExperimentForm::setChoice(const std::string& key, const std::string& value)
{
    QComboBox* combo = m_choices.at(key);
    const QString v = qstr(value);
    int index = combo->findData(v);
    if (index < 0) {
        // Keep a value this build does not list (e.g. from a newer config) so validation names it.
        combo->addItem(v, v);
        index = combo->count() - 1;
    }
    combo->setCurrentIndex(index);
}

QString ExperimentForm::fieldMessage(const std::string& key) const
{
    const auto it = m_fields.find(key);
    return it == m_fields.end() ? QString() : it->second->message();
}

std::vector<hearth::ConfigIssue> ExperimentForm::showIssues(const std::vector<hearth::ConfigIssue>& issues)
{
    std::map<std::string, QStringList> byKey;
    std::vector<hearth::ConfigIssue> unmatched;
    for (const auto& issue : issues) {
        if (m_fields.count(issue.key))
            byKey[issue.key] << qstr(issue.message);
        else
            unmatched.push_back(issue);
    }
    for (auto& [key, field] : m_fields) {
        const auto it = byKey.find(key);
        field->setMessage(it == byKey.end() ? QString() : it->second.join(QLatin1Char('\n')));
    }
    return unmatched;
}

}  // namespace hearth::ui
