#pragma once
// ExperimentForm: every ExperimentConfig key as an editor, built from the key table
// (ConfigSchema: group, label, help, type, choices, range), converting to and from the config and
// showing problems in place. Each editor's objectName is its dotted config key ("trainer.batch_size").

#include "engine/config/ConfigSchema.h"
#include "engine/config/ExperimentConfig.h"

#include <QWidget>

#include <map>
#include <string>
#include <vector>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QSpinBox;
class QVBoxLayout;

namespace hearth::ui {

class CheckpointSummary;
class TorchScriptSummary;

class TextReader;
class ValidatedField;

class ExperimentForm final : public QWidget {
    Q_OBJECT

public:
    explicit ExperimentForm(QWidget* parent = nullptr);

    void setConfig(const hearth::ExperimentConfig& config);
    // The edited config; text that is not a number (or list) becomes an issue in `parseIssues`.
    hearth::ExperimentConfig config(std::vector<hearth::ConfigIssue>* parseIssues = nullptr) const;
    // Shows each issue under its field; returns those that name no field.
    std::vector<hearth::ConfigIssue> showIssues(const std::vector<hearth::ConfigIssue>& issues);
    // `known` false: CPU-only assumptions while the machine's devices are being probed.
    void setCapabilities(const hearth::DeviceCapabilities& caps, bool known = true);
    // A dropped or chosen data source: a folder means IDX, a .csv file means CSV.
    void setDataSource(const QString& path);
    QString fieldMessage(const std::string& key) const;

Q_SIGNALS:
    void changed();

private:
    void buildGroups(QVBoxLayout* layout);
    void addKey(QFormLayout* form, const hearth::ConfigKey& key);
    void offerWhatCanRun(const hearth::DeviceCapabilities& caps);

    QFormLayout* newGroup(const QString& title, QWidget** group);
    void addField(QFormLayout* form, const std::string& key, const QString& label, QWidget* editor,
                  const QString& toolTip, QWidget* frame = nullptr);
    QLineEdit* addText(QFormLayout* form, const std::string& key, const QString& label, const QString& tip,
                       const QString& placeholder = {});
    QSpinBox* addInt(QFormLayout* form, const std::string& key, const QString& label, int min, int max,
                     const QString& tip);
    QDoubleSpinBox* addFraction(QFormLayout* form, const std::string& key, const QString& label, const QString& tip);
    QComboBox* addChoice(QFormLayout* form, const std::string& key, const QString& label, const QStringList& values,
                         const QString& tip);
    QCheckBox* addFlag(QFormLayout* form, const std::string& key, const QString& text, const QString& tip);
    QLineEdit* addPath(QFormLayout* form, const std::string& key, const QString& label, const QString& tip,
                       bool folderChoice);

    // One key's editor <-> its config field, by the key's type (ConfigSchema).
    void showValue(const hearth::ConfigKey& key, const hearth::ExperimentConfig& config);
    void readValue(const hearth::ConfigKey& key, hearth::ExperimentConfig& config, TextReader& read) const;
    void browse(const std::string& key, bool folder);
    void updateApplicability();   // enables the keys that have an effect with the other settings
    void updateDevices();         // the global batch line
    void onEdited();

    // Typed accessors by key (the maps own nothing; widgets are children of this form).
    QString text(const std::string& key) const;
    void setText(const std::string& key, const QString& value);
    void setChoice(const std::string& key, const std::string& value);
    std::string choice(const std::string& key) const;
    void setFraction(const std::string& key, double value);
    double fraction(const std::string& key) const;

    std::map<std::string, ValidatedField*> m_fields;
    std::map<std::string, QLineEdit*> m_texts;
    std::map<std::string, QSpinBox*> m_ints;
    std::map<std::string, QDoubleSpinBox*> m_fractions;
    // The loaded value of each fraction: a spin box shows 4 decimals, and 1/12 must survive a
    // round trip through the form untouched.
    std::map<std::string, double> m_exactFractions;
    std::map<std::string, QComboBox*> m_choices;
    std::map<std::string, QCheckBox*> m_flags;
    QLabel* m_capabilities = nullptr;
    QLabel* m_globalBatch = nullptr;   // batch x devices x nodes x accumulation
    CheckpointSummary* m_checkpoint = nullptr;   // under model.pretrained
    TorchScriptSummary* m_torchscript = nullptr; // under model.path
    hearth::DeviceCapabilities m_caps;
    bool m_loading = false;
};

}  // namespace hearth::ui
