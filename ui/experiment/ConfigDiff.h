#pragma once
// Config flattening and diffing on dotted keys ("trainer.precision"), for the report's config
// listing and the comparison's "what differs" table.

#include <QMap>
#include <QString>
#include <QStringList>
#include <QVector>

namespace hearth::ui {

// {"a": {"b": 1}} -> {"a.b": "1"}; strings unquoted, arrays as compact JSON, null as "null".
QMap<QString, QString> flattenJson(const QString& json);

// Parses and re-writes a config so configs written by hand or by older runs list every key.
QString normalizedConfigJson(const QString& json);

struct ConfigDifference {
    QString key;
    QStringList values;   // one per config, "" when a config lacks the key
};

// Keys whose values are not all equal, in schema order. `name` is left out: runs differ by name.
QVector<ConfigDifference> diffConfigs(const QStringList& configJsons, bool includeName = false);

}  // namespace hearth::ui
