// ExperimentForm <-> ExperimentConfig through the key table: each key's editor shows and reads its
// field by the field's type; text that is not a number becomes an issue under its key.
#include "ui/experiment/ExperimentForm.h"

#include "engine/config/ConfigSchema.h"

#include "ui/widgets/Format.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLineEdit>
#include <QLocale>
#include <QRegularExpression>
#include <QSpinBox>

#include <algorithm>
#include <cmath>
#include <limits>
#include <variant>

namespace hearth::ui {

namespace {

QString number(double v)
{
    return QString::number(v, 'g', 10);
}

QString joinInts(const std::vector<int64_t>& values)
{
    QStringList parts;
    for (int64_t v : values)
        parts << QString::number(v);
    return parts.join(QStringLiteral(", "));
}

}  // namespace

// Reads text fields that hold numbers, collecting "not a number" problems under their key.
class TextReader {
public:
    explicit TextReader(std::vector<hearth::ConfigIssue>* issues) : m_issues(issues) {}

    double real(const std::string& key, const QString& text, double fallback)
    {
        bool ok = false;
        const double v = QLocale::c().toDouble(text.trimmed(), &ok);
        if (ok)
            return v;
        const double local = QLocale().toDouble(text.trimmed(), &ok);
        if (ok)
            return local;
        fail(key, QObject::tr("must be a number (e.g. 0.001 or 1e-3), got '%1'").arg(text));
        return fallback;
    }
    std::optional<double> optionalReal(const std::string& key, const QString& text)
    {
        if (text.trimmed().isEmpty())
            return std::nullopt;
        return real(key, text, 0.0);
    }
    std::vector<int64_t> ints(const std::string& key, const QString& text, const std::vector<int64_t>& fallback)
    {
        std::vector<int64_t> values;
        const auto parts = text.split(QRegularExpression(QStringLiteral("[,;\\s]+")), Qt::SkipEmptyParts);
        for (const QString& part : parts) {
            bool ok = false;
            const qlonglong v = part.toLongLong(&ok);
            if (!ok) {
                fail(key, QObject::tr("must be a list of whole numbers such as 256, 128; got '%1'").arg(text));
                return fallback;
            }
            values.push_back(v);
        }
        return values;
    }
    uint64_t unsignedInt(const std::string& key, const QString& text, uint64_t fallback)
    {
        bool ok = false;
        const qulonglong v = text.trimmed().toULongLong(&ok);
        if (ok)
            return v;
        fail(key, QObject::tr("must be a whole number of 0 or more, got '%1'").arg(text));
        return fallback;
    }

private:
    void fail(const std::string& key, const QString& message) { m_issues->push_back({key, message.toStdString()}); }
    std::vector<hearth::ConfigIssue>* m_issues;
};


void ExperimentForm::setFraction(const std::string& key, double value)
{
    m_exactFractions[key] = value;
    m_fractions.at(key)->setValue(value);
}

double ExperimentForm::fraction(const std::string& key) const
{
    const QDoubleSpinBox* spin = m_fractions.at(key);
    const auto exact = m_exactFractions.find(key);
    if (exact != m_exactFractions.end() && std::abs(spin->valueFromText(spin->textFromValue(exact->second)) - spin->value()) < 1e-12)
        return exact->second;
    return spin->value();
}

void ExperimentForm::setConfig(const hearth::ExperimentConfig& c)
{
    m_loading = true;
    for (const hearth::ConfigKey& key : hearth::configSchema())
        showValue(key, c);
    m_loading = false;
    updateApplicability();
    Q_EMIT changed();
}

hearth::ExperimentConfig ExperimentForm::config(std::vector<hearth::ConfigIssue>* parseIssues) const
{
    std::vector<hearth::ConfigIssue> local;
    TextReader read(parseIssues ? parseIssues : &local);
    hearth::ExperimentConfig c;
    for (const hearth::ConfigKey& key : hearth::configSchema())
        readValue(key, c, read);
    return c;
}

void ExperimentForm::showValue(const hearth::ConfigKey& key, const hearth::ExperimentConfig& config)
{
    const std::string& k = key.key;
    const auto clampInt = [](int64_t v) {
        return static_cast<int>(std::clamp<int64_t>(v, std::numeric_limits<int>::min(), std::numeric_limits<int>::max()));
    };
    // A loaded number above what this machine offers (trainer.devices=2 before the devices are
    // probed) is shown as it is, not clamped, so validation names it and the file is not changed.
    const auto showInt = [this](const std::string& name, int v) {
        QSpinBox* spin = m_ints.at(name);
        if (v > spin->maximum())
            spin->setMaximum(v);
        spin->setValue(v);
    };
    std::visit(
        [&](auto* field) {
            using V = std::remove_pointer_t<decltype(field)>;
            if constexpr (std::is_same_v<V, std::string>) {
                if (m_choices.count(k))
                    setChoice(k, *field);
                else
                    setText(k, qstr(*field));
            } else if constexpr (std::is_same_v<V, std::optional<std::string>>) {
                setText(k, qstr(field->value_or(std::string())));
            } else if constexpr (std::is_same_v<V, bool>) {
                m_flags.at(k)->setChecked(*field);
            } else if constexpr (std::is_same_v<V, int64_t>) {
                showInt(k, clampInt(*field));
            } else if constexpr (std::is_same_v<V, std::optional<int64_t>>) {
                showInt(k, clampInt(field->value_or(0)));   // 0: the special "unset" value
            } else if constexpr (std::is_same_v<V, uint64_t>) {
                setText(k, QString::number(*field));
            } else if constexpr (std::is_same_v<V, double>) {
                if (m_fractions.count(k))
                    setFraction(k, *field);
                else
                    setText(k, number(*field));
            } else if constexpr (std::is_same_v<V, std::optional<double>>) {
                setText(k, *field ? number(**field) : QString());
            } else if constexpr (std::is_same_v<V, std::vector<int64_t>>) {
                setText(k, joinInts(*field));
            }
        },
        key.field(const_cast<hearth::ExperimentConfig&>(config)));
}

void ExperimentForm::readValue(const hearth::ConfigKey& key, hearth::ExperimentConfig& config, TextReader& read) const
{
    const std::string& k = key.key;
    std::visit(
        [&](auto* field) {
            using V = std::remove_pointer_t<decltype(field)>;
            if constexpr (std::is_same_v<V, std::string>) {
                *field = m_choices.count(k) ? choice(k) : text(k).trimmed().toStdString();
            } else if constexpr (std::is_same_v<V, std::optional<std::string>>) {
                const QString t = text(k).trimmed();
                *field = t.isEmpty() ? std::nullopt : std::optional<std::string>(t.toStdString());
            } else if constexpr (std::is_same_v<V, bool>) {
                *field = m_flags.at(k)->isChecked();
            } else if constexpr (std::is_same_v<V, int64_t>) {
                *field = m_ints.at(k)->value();
            } else if constexpr (std::is_same_v<V, std::optional<int64_t>>) {
                const int v = m_ints.at(k)->value();
                *field = v > 0 ? std::optional<int64_t>(v) : std::nullopt;
            } else if constexpr (std::is_same_v<V, uint64_t>) {
                *field = read.unsignedInt(k, text(k), *field);
            } else if constexpr (std::is_same_v<V, double>) {
                *field = m_fractions.count(k) ? fraction(k) : read.real(k, text(k), *field);
            } else if constexpr (std::is_same_v<V, std::optional<double>>) {
                *field = read.optionalReal(k, text(k));
            } else if constexpr (std::is_same_v<V, std::vector<int64_t>>) {
                *field = read.ints(k, text(k), *field);
            }
        },
        key.field(config));
}

}  // namespace hearth::ui
