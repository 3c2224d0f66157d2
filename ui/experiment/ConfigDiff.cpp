#include "ui/experiment/ConfigDiff.h"

#include "engine/config/ExperimentConfig.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>


namespace hearth::ui {

namespace {

QString scalarText(const QJsonValue& v)
{
    switch (v.type()) {
    case QJsonValue::Null: return QStringLiteral("null");
    case QJsonValue::Bool: return v.toBool() ? QStringLiteral("true") : QStringLiteral("false");
    case QJsonValue::Double: {
        const double d = v.toDouble();
        return QString::number(d, 'g', 10);
    }
    case QJsonValue::String: return v.toString();
    case QJsonValue::Array: return QString::fromUtf8(QJsonDocument(v.toArray()).toJson(QJsonDocument::Compact));
    default: return {};
    }
}

void flattenInto(const QJsonObject& object, const QString& prefix, QMap<QString, QString>& out)
{
    for (auto it = object.begin(); it != object.end(); ++it) {
        const QString key = prefix.isEmpty() ? it.key() : prefix + QLatin1Char('.') + it.key();
        if (it.value().isObject())
            flattenInto(it.value().toObject(), key, out);
        else
            out.insert(key, scalarText(it.value()));
    }
}

}  // namespace

QMap<QString, QString> flattenJson(const QString& json)
{
    QMap<QString, QString> out;
    flattenInto(QJsonDocument::fromJson(json.toUtf8()).object(), QString(), out);
    return out;
}

QString normalizedConfigJson(const QString& json)
{
    try {
        return QString::fromStdString(hearth::configToJson(hearth::configFromJson(json.toStdString())));
    } catch (const std::exception&) {
        return json;   // from another version: compare what is there
    }
}

QVector<ConfigDifference> diffConfigs(const QStringList& configJsons, bool includeName)
{
    QVector<QMap<QString, QString>> flat;
    QSet<QString> seen;
    for (const QString& json : configJsons) {
        flat << flattenJson(normalizedConfigJson(json));
        for (const QString& k : flat.back().keys())
            seen.insert(k);
    }
    // Schema order (as in the form and the JSON files), then keys this build does not know.
    QStringList keys;
    for (const std::string& k : hearth::configKeys()) {
        const QString key = QString::fromStdString(k);
        if (seen.remove(key))
            keys << key;
    }
    QStringList rest(seen.begin(), seen.end());
    rest.sort();
    keys << rest;
    QVector<ConfigDifference> diffs;
    for (const QString& key : std::as_const(keys)) {
        if (!includeName && key == QLatin1String("name"))
            continue;
        ConfigDifference d{key, {}};
        for (const auto& f : flat)
            d.values << f.value(key);
        if (QSet<QString>(d.values.begin(), d.values.end()).size() > 1)
            diffs << d;
    }
    return diffs;
}

}  // namespace hearth::ui
