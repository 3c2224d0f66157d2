// ExperimentForm <-> ExperimentConfig: which editor holds which field, and how text becomes values.
#include "ui/experiment/ExperimentForm.h"

#include "ui/widgets/Format.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLineEdit>
#include <QLocale>
#include <QRegularExpression>
#include <QSpinBox>

#include <cmath>
#include <limits>

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
    setText("name", qstr(c.name));
    setText("seed", QString::number(c.seed));
    setChoice("data.kind", c.data.kind);
    setText("data.path", qstr(c.data.path));
    setText("data.val_path", qstr(c.data.val_path.value_or(std::string())));
    setText("data.test_path", qstr(c.data.test_path.value_or(std::string())));
    setText("data.label_column", qstr(c.data.label_column));
    setFraction("data.val_fraction", c.data.val_fraction);
    setFraction("data.test_fraction", c.data.test_fraction);
    m_ints.at("data.limit")->setValue(static_cast<int>(std::min<int64_t>(c.data.limit.value_or(0),
                                                                         std::numeric_limits<int>::max())));
    setChoice("model.name", c.model.name);
    setText("model.hidden", joinInts(c.model.hidden));
    setText("model.channels", joinInts(c.model.channels));
    setFraction("model.dropout", c.model.dropout);
    const auto& o = c.optimizer;
    setChoice("optimizer.name", o.name);
    setText("optimizer.lr", number(o.lr));
    setText("optimizer.weight_decay", number(o.weight_decay));
    setText("optimizer.momentum", number(o.momentum));
    setText("optimizer.beta1", number(o.beta1));
    setText("optimizer.beta2", number(o.beta2));
    setText("optimizer.eps", number(o.eps));
    const auto& s = c.scheduler;
    setChoice("scheduler.name", s.name);
    m_ints.at("scheduler.step_size")->setValue(static_cast<int>(s.step_size));
    setText("scheduler.gamma", number(s.gamma));
    m_ints.at("scheduler.warmup_steps")->setValue(static_cast<int>(s.warmup_steps));
    setText("scheduler.min_lr", number(s.min_lr));
    setTrainer(c.trainer);
    m_loading = false;
    updateApplicability();
    Q_EMIT changed();
}

void ExperimentForm::setTrainer(const hearth::TrainerConfig& t)
{
    const auto setInt = [this](const std::string& key, int64_t v) {
        m_ints.at(key)->setValue(static_cast<int>(std::clamp<int64_t>(v, std::numeric_limits<int>::min(),
                                                                      std::numeric_limits<int>::max())));
    };
    setInt("trainer.max_epochs", t.max_epochs);
    setInt("trainer.batch_size", t.batch_size);
    setInt("trainer.accumulate_grad_batches", t.accumulate_grad_batches);
    setInt("trainer.devices", t.devices);
    setInt("trainer.num_workers", t.num_workers);
    setInt("trainer.prefetch_factor", t.prefetch_factor);
    setInt("trainer.log_every_n_steps", t.log_every_n_steps);
    setInt("trainer.num_threads", t.num_threads);
    setChoice("trainer.precision", t.precision);
    setChoice("trainer.accelerator", t.accelerator);
    setChoice("trainer.strategy", t.strategy);
    setChoice("trainer.checkpoint.monitor", t.checkpoint.monitor);
    setChoice("trainer.checkpoint.mode", t.checkpoint.mode);
    m_flags.at("trainer.pin_memory")->setChecked(t.pin_memory);
    m_flags.at("trainer.persistent_workers")->setChecked(t.persistent_workers);
    m_flags.at("trainer.deterministic")->setChecked(t.deterministic);
    m_flags.at("trainer.cudnn_benchmark")->setChecked(t.cudnn_benchmark);
    m_flags.at("trainer.tf32")->setChecked(t.tf32);
    m_flags.at("trainer.channels_last")->setChecked(t.channels_last);
    setText("trainer.gradient_clip_val", t.gradient_clip_val ? number(*t.gradient_clip_val) : QString());
}

void ExperimentForm::readTrainer(hearth::TrainerConfig& t, TextReader& read) const
{
    t.max_epochs = m_ints.at("trainer.max_epochs")->value();
    t.batch_size = m_ints.at("trainer.batch_size")->value();
    t.accumulate_grad_batches = m_ints.at("trainer.accumulate_grad_batches")->value();
    t.devices = m_ints.at("trainer.devices")->value();
    t.num_workers = m_ints.at("trainer.num_workers")->value();
    t.prefetch_factor = m_ints.at("trainer.prefetch_factor")->value();
    t.log_every_n_steps = m_ints.at("trainer.log_every_n_steps")->value();
    t.num_threads = m_ints.at("trainer.num_threads")->value();
    t.precision = choice("trainer.precision");
    t.accelerator = choice("trainer.accelerator");
    t.strategy = choice("trainer.strategy");
    t.checkpoint.monitor = choice("trainer.checkpoint.monitor");
    t.checkpoint.mode = choice("trainer.checkpoint.mode");
    t.pin_memory = m_flags.at("trainer.pin_memory")->isChecked();
    t.persistent_workers = m_flags.at("trainer.persistent_workers")->isChecked();
    t.deterministic = m_flags.at("trainer.deterministic")->isChecked();
    t.cudnn_benchmark = m_flags.at("trainer.cudnn_benchmark")->isChecked();
    t.tf32 = m_flags.at("trainer.tf32")->isChecked();
    t.channels_last = m_flags.at("trainer.channels_last")->isChecked();
    t.gradient_clip_val = read.optionalReal("trainer.gradient_clip_val", text("trainer.gradient_clip_val"));
}

hearth::ExperimentConfig ExperimentForm::config(std::vector<hearth::ConfigIssue>* parseIssues) const
{
    std::vector<hearth::ConfigIssue> local;
    TextReader read(parseIssues ? parseIssues : &local);
    hearth::ExperimentConfig c;
    c.name = text("name").trimmed().toStdString();
    c.seed = read.unsignedInt("seed", text("seed"), c.seed);
    c.data.kind = choice("data.kind");
    c.data.path = text("data.path").trimmed().toStdString();
    const auto optionalPath = [this](const std::string& key) -> std::optional<std::string> {
        const QString t = text(key).trimmed();
        return t.isEmpty() ? std::nullopt : std::optional<std::string>(t.toStdString());
    };
    c.data.val_path = optionalPath("data.val_path");
    c.data.test_path = optionalPath("data.test_path");
    c.data.label_column = text("data.label_column").trimmed().toStdString();
    c.data.val_fraction = fraction("data.val_fraction");
    c.data.test_fraction = fraction("data.test_fraction");
    const int limit = m_ints.at("data.limit")->value();
    c.data.limit = limit > 0 ? std::optional<int64_t>(limit) : std::nullopt;
    c.model.name = choice("model.name");
    c.model.hidden = read.ints("model.hidden", text("model.hidden"), c.model.hidden);
    c.model.channels = read.ints("model.channels", text("model.channels"), c.model.channels);
    c.model.dropout = fraction("model.dropout");
    auto& o = c.optimizer;
    o.name = choice("optimizer.name");
    o.lr = read.real("optimizer.lr", text("optimizer.lr"), o.lr);
    o.weight_decay = read.real("optimizer.weight_decay", text("optimizer.weight_decay"), o.weight_decay);
    o.momentum = read.real("optimizer.momentum", text("optimizer.momentum"), o.momentum);
    o.beta1 = read.real("optimizer.beta1", text("optimizer.beta1"), o.beta1);
    o.beta2 = read.real("optimizer.beta2", text("optimizer.beta2"), o.beta2);
    o.eps = read.real("optimizer.eps", text("optimizer.eps"), o.eps);
    auto& s = c.scheduler;
    s.name = choice("scheduler.name");
    s.step_size = m_ints.at("scheduler.step_size")->value();
    s.gamma = read.real("scheduler.gamma", text("scheduler.gamma"), s.gamma);
    s.warmup_steps = m_ints.at("scheduler.warmup_steps")->value();
    s.min_lr = read.real("scheduler.min_lr", text("scheduler.min_lr"), s.min_lr);
    readTrainer(c.trainer, read);
    return c;
}

}  // namespace hearth::ui
