#include "ui/experiment/ExperimentForm.h"

#include "ui/experiment/CheckpointSummary.h"
#include "ui/experiment/TorchScriptSummary.h"

#include "engine/config/ConfigSchema.h"
#include "engine/data/images/ImageFolderScan.h"

#include "ui/widgets/Format.h"
#include "ui/widgets/ValidatedField.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFile>
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
#include <QWheelEvent>

#include <algorithm>
#include <limits>

namespace hearth::ui {

namespace {

// A spin box or list in the scrolling panel takes the wheel only once it has focus: otherwise a
// wheel turned to scroll the panel changes whichever field passes under the pointer. The ignored
// event goes on to the scroll area, which scrolls.
class WheelOnlyWhenFocused final : public QObject {
public:
    using QObject::QObject;

protected:
    bool eventFilter(QObject* watched, QEvent* event) override
    {
        if (event->type() == QEvent::Wheel) {
            const auto* widget = qobject_cast<QWidget*>(watched);
            if (widget && !widget->hasFocus()) {
                event->ignore();
                return true;
            }
        }
        return QObject::eventFilter(watched, event);
    }
};

void takeWheelOnlyWhenFocused(QWidget* editor)
{
    editor->setFocusPolicy(Qt::StrongFocus);   // not Qt::WheelFocus: the wheel does not focus it
    editor->installEventFilter(new WheelOnlyWhenFocused(editor));
}

}  // namespace

ExperimentForm::ExperimentForm(QWidget* parent) : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    buildGroups(layout);
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
    takeWheelOnlyWhenFocused(spin);
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
    takeWheelOnlyWhenFocused(spin);
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
    takeWheelOnlyWhenFocused(combo);
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
    const hearth::ConfigKey* described = hearth::findConfigKey(key);
    edit->setPlaceholderText(key == "data.path" ? tr("folder or CSV file")
                             : described && !described->null_label.empty() ? qstr(described->null_label)
                                                                            : tr("none"));
    auto* button = new QToolButton;
    button->setText(tr("…"));
    button->setToolTip(tr("Choose…"));
    if (folderChoice) {
        auto* menu = new QMenu(button);
        const bool data = key == "data.path";
        menu->addAction(data ? tr("IDX Folder…") : tr("Folder…"), this, [this, key] { browse(key, true); });
        menu->addAction(data ? tr("CSV File…") : tr("vocab.txt or tokenizer.json…"), this,
                        [this, key] { browse(key, false); });
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

// One group per ConfigKey::group, in configGroups()' order, keys in the key table's order; each
// key's editor follows from its description (type, choices, range, widget hint), its label and
// help text too.
void ExperimentForm::buildGroups(QVBoxLayout* layout)
{
    std::map<std::string, QFormLayout*> groups;
    std::vector<std::string> order = hearth::configGroups();
    for (const hearth::ConfigKey& key : hearth::configSchema())
        if (std::find(order.begin(), order.end(), key.group) == order.end())
            order.push_back(key.group);
    for (const std::string& name : order) {
        QWidget* group = nullptr;
        QFormLayout* f = newGroup(qstr(name), &group);
        groups[name] = f;
        layout->addWidget(group);
        if (name == "Devices") {
            m_capabilities = new QLabel(this);
            m_capabilities->setObjectName(QStringLiteral("capabilities"));
            m_capabilities->setWordWrap(true);
            f->addRow(m_capabilities);
            m_globalBatch = new QLabel(this);
            m_globalBatch->setObjectName(QStringLiteral("globalBatch"));
            m_globalBatch->setWordWrap(true);
            f->addRow(m_globalBatch);
        }
    }
    for (const hearth::ConfigKey& key : hearth::configSchema())
        addKey(groups.at(key.group), key);
}

void ExperimentForm::addKey(QFormLayout* f, const hearth::ConfigKey& key)
{
    using hearth::ConfigType;
    using hearth::ConfigWidget;
    const QString label = qstr(key.label);
    const QString help = qstr(key.help);
    switch (key.type) {
    case ConfigType::Bool:
        addFlag(f, key.key, label, help);
        return;
    case ConfigType::String:
        if (!key.choices.empty()) {
            QStringList values;
            for (const auto& c : key.choices)
                values << qstr(c);
            addChoice(f, key.key, label, values, help);
        } else if (key.widget == ConfigWidget::Path || key.widget == ConfigWidget::DirectoryOrFile) {
            addPath(f, key.key, label, help, key.widget == ConfigWidget::DirectoryOrFile);
            if (key.key == "model.pretrained") {
                // What the chosen checkpoint holds, under its field.
                m_checkpoint = new CheckpointSummary(this);
                f->addRow(m_checkpoint);
                connect(m_texts.at(key.key), &QLineEdit::textChanged, m_checkpoint, &CheckpointSummary::setFolder);
            } else if (key.key == "model.path") {
                // What the chosen TorchScript file holds (read by hearth-cli inspect), under its field.
                m_torchscript = new TorchScriptSummary(this);
                f->addRow(m_torchscript);
                connect(m_texts.at(key.key), &QLineEdit::textChanged, m_torchscript, &TorchScriptSummary::setFile);
            }
        } else {
            addText(f, key.key, label, help);
        }
        return;
    case ConfigType::Int: {
        // One below the allowed minimum, so an impossible value can be typed and is explained,
        // not silently clamped; a key whose 0 means "unset" starts at 0 and shows what that means.
        const double lowest = key.zero_is_null ? 0.0 : key.min.value_or(0.0) - 1.0;
        const double highest = std::min<double>(key.max.value_or(std::numeric_limits<int>::max()),
                                                std::numeric_limits<int>::max());
        QSpinBox* spin = addInt(f, key.key, label, static_cast<int>(lowest), static_cast<int>(highest), help);
        if (key.zero_is_null)
            spin->setSpecialValueText(qstr(key.null_label));
        return;
    }
    case ConfigType::Double:
        if (key.widget == ConfigWidget::Fraction)
            addFraction(f, key.key, label, help);
        else
            addText(f, key.key, label, help, key.nullable ? qstr(key.null_label) : QString());
        return;
    case ConfigType::UInt:
    case ConfigType::IntList:
        addText(f, key.key, label, help);
        return;
    }
}

void ExperimentForm::setCapabilities(const hearth::DeviceCapabilities& caps, bool known)
{
    m_caps = caps;
    QString text;
    if (!caps.cuda_available || caps.cuda_device_count == 0) {
        text = tr("No CUDA device — CPU only: %1 (%n logical CPUs).", nullptr, static_cast<int>(caps.cpu_threads))
                   .arg(caps.cpu_name.empty() ? tr("unknown CPU") : qstr(caps.cpu_name));
        if (caps.distributed)
            text += tr(" Several devices run as Gloo processes on this CPU.");
    } else {
        QStringList names;
        for (size_t i = 0; i < caps.cuda_device_names.size(); ++i) {
            const int64_t bytes = i < caps.cuda_device_memory.size() ? caps.cuda_device_memory[i] : 0;
            names << QStringLiteral("cuda:%1 %2%3")
                         .arg(i)
                         .arg(qstr(caps.cuda_device_names[i]))
                         .arg(bytes > 0 ? QStringLiteral(" (%1)").arg(formatBytes(bytes)) : QString());
        }
        text = tr("%n CUDA device(s): %1", nullptr, static_cast<int>(caps.cuda_device_count)).arg(names.join(", "));
        text += caps.cuda_bf16 ? tr(" · bf16 supported") : tr(" · no bf16");
    }
    text += caps.distributed ? tr(" · distributed available (ddp, zero1, zero2, zero3, pipeline)") : QString();
    if (!known)
        text = tr("Probing this machine's devices… (until then, what a CPU-only machine can run)");
    m_capabilities->setText(text);
    offerWhatCanRun(caps);
    updateApplicability();   // some keys apply on some machines only (the ddp keys: several GPUs)
}

// Choices and ranges follow what validation accepts on this machine: 16-mixed only with CUDA (or
// CPU float16 autocast), cuda only with a GPU, the distributed strategies and several devices
// only where c10d is built in. A loaded value outside them stays selectable, so validation names it.
void ExperimentForm::offerWhatCanRun(const hearth::DeviceCapabilities& caps)
{
    const bool wasLoading = m_loading;
    m_loading = true;
    for (const hearth::ConfigKey& key : hearth::configSchema()) {
        if (const auto combo = m_choices.find(key.key); combo != m_choices.end()) {
            const std::string current = choice(key.key);
            combo->second->clear();
            for (const auto& value : hearth::offeredChoices(key, caps))
                combo->second->addItem(qstr(value), qstr(value));
            setChoice(key.key, current);
        } else if (const auto spin = m_ints.find(key.key); spin != m_ints.end()) {
            // Never below the value shown: a loaded one stays (QSpinBox would clamp it).
            if (const auto max = hearth::offeredMax(key, caps))
                spin->second->setMaximum(std::max(spin->second->value(),
                                                  static_cast<int>(std::min<double>(*max, std::numeric_limits<int>::max()))));
        }
    }
    m_loading = wasLoading;
}

void ExperimentForm::setDataSource(const QString& path)
{
    const QFileInfo info(path);
    // A CSV whose header has a text column holds texts (IMDB layout): a transformer reads it.
    QString header;
    if (QFile file(path); !info.isDir() && file.open(QIODevice::ReadOnly))
        header = QString::fromUtf8(file.readLine()).trimmed().toLower();
    const QStringList columns = header.split(QLatin1Char(','));
    const auto textColumn = std::find_if(columns.begin(), columns.end(), [](const QString& c) {
        return c == QLatin1String("text") || c == QLatin1String("review") || c == QLatin1String("sentence");
    });
    if (info.isDir() && hearth::looksLikeImageFolder(info.absoluteFilePath().toStdString())) {
        setChoice("data.kind", "image_folder");   // class subfolders of JPEG/PNG files
        if (choice("model.name") != "cnn" && !hearth::isResNetName(choice("model.name")) &&
            choice("model.name") != "torchscript")
            setChoice("model.name", "cnn");
    } else if (info.isDir()) {
        setChoice("data.kind", "idx");
    } else if (textColumn != columns.end()) {
        setChoice("data.kind", "text_csv");
        setText("data.text_column", *textColumn);
        if (choice("model.name") != "bert")
            setChoice("model.name", "distilbert");
    } else {
        setChoice("data.kind", "csv");
        setChoice("model.name", "mlp");   // a cnn needs images; tabular rows need an mlp
    }
    setText("data.path", info.absoluteFilePath());
}

void ExperimentForm::browse(const std::string& key, bool folder)
{
    const QString current = text(key);
    QString chosen;
    if (key == "model.pretrained")
        chosen = QFileDialog::getExistingDirectory(this, tr("Choose a Hugging Face Checkpoint Folder"), current);
    else if (key == "data.tokenizer" && folder)
        chosen = QFileDialog::getExistingDirectory(this, tr("Choose a Tokenizer Folder"), current);
    else if (key == "data.tokenizer")
        chosen = QFileDialog::getOpenFileName(this, tr("Choose a Tokenizer File"), QFileInfo(current).absolutePath(),
                                              tr("Tokenizers (vocab.txt tokenizer.json);;All files (*)"));
    else if (folder)
        chosen = QFileDialog::getExistingDirectory(this, tr("Choose a Data Folder (IDX files or class subfolders of images)"),
                                                   current);
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

// Each key's no-effect rule (ConfigSchema), the one validate() warns by, decides whether its
// editor is enabled; the tooltip says why not.
void ExperimentForm::updateApplicability()
{
    const hearth::ExperimentConfig current = config();
    for (const hearth::ConfigKey& key : hearth::configSchema())
        m_fields.at(key.key)->setNoEffect(qstr(hearth::noEffectReason(key, current, m_caps)));
    updateDevices();
}

void ExperimentForm::updateDevices()
{
    if (!m_globalBatch)
        return;
    const int64_t batch = m_ints.at("trainer.batch_size")->value();
    const int64_t accumulate = m_ints.at("trainer.accumulate_grad_batches")->value();
    const int64_t nodes = m_ints.at("trainer.num_nodes")->value();
    const int64_t asked = m_ints.at("trainer.devices")->value();   // 0: auto
    const bool onCuda = choice("trainer.accelerator") == "cuda" ||
                        (choice("trainer.accelerator") == "auto" && m_caps.cuda_available);
    const int64_t devices = asked > 0 ? asked : (onCuda ? std::max<int64_t>(m_caps.cuda_device_count, 1) : 1);
    const int64_t processes = devices * nodes;
    const QString launches =
        processes > 1 ? tr(" Start launches %1 processes; Stop stops them all.").arg(processes) : QString();
    if (choice("trainer.strategy") == "pipeline") {
        // Every stage reads the same batch: the model is what is split.
        m_globalBatch->setText(tr("Batch per optimizer step: %1 × %2 accumulated = %3, cut into %4 micro-batches that "
                                  "flow through %5 stage(s), one per device.")
                                   .arg(batch)
                                   .arg(accumulate)
                                   .arg(batch * accumulate)
                                   .arg(m_ints.count("trainer.pipeline.micro_batches")
                                            ? m_ints.at("trainer.pipeline.micro_batches")->value()
                                            : 1)
                                   .arg(processes) +
                               launches);
        return;
    }
    m_globalBatch->setText(tr("Global batch per optimizer step: %1 per device × %2 device(s) × %3 node(s) × %4 "
                              "accumulated = %5.")
                               .arg(batch)
                               .arg(devices)
                               .arg(nodes)
                               .arg(accumulate)
                               .arg(batch * processes * accumulate) +
                           launches);
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
