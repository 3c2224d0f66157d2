#include "ui/experiment/CheckpointSummary.h"

#include "ui/widgets/Format.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>

namespace hearth::ui {

namespace {

// The first of `keys` that config.json has (transformers' aliases: DistilBERT's dim = hidden_size).
QString number(const QJsonObject& config, std::initializer_list<const char*> keys)
{
    for (const char* key : keys)
        if (config.contains(QLatin1String(key)))
            return QString::number(config.value(QLatin1String(key)).toVariant().toLongLong());
    return QStringLiteral("?");
}

}  // namespace

CheckpointSummary::CheckpointSummary(QWidget* parent) : QLabel(parent)
{
    setObjectName(QStringLiteral("checkpointSummary"));
    setWordWrap(true);
    setTextInteractionFlags(Qt::TextSelectableByMouse);
    setVisible(false);
}

void CheckpointSummary::setFolder(const QString& folder)
{
    setVisible(!folder.trimmed().isEmpty());
    setText(folder.trimmed().isEmpty() ? QString() : describe(folder.trimmed()));
}

QString CheckpointSummary::describe(const QString& folder)
{
    const QDir dir(folder);
    const QFileInfo info(folder);
    if (info.isFile()) {
        // A resnet's weights: one state_dict file (torchvision's .pth, or .safetensors).
        const QString suffix = info.suffix().toLower();
        if (suffix == QLatin1String("pth") || suffix == QLatin1String("pt") || suffix == QLatin1String("bin") ||
            suffix == QLatin1String("safetensors"))
            return tr("weights file %1 (%2): for resnet18/34/50, torchvision's state_dict; the classifier is "
                      "replaced when the data has another class count")
                .arg(info.fileName(), formatBytes(info.size()));
        return tr("Not a folder or weights file: %1").arg(folder);
    }
    if (!info.isDir())
        return tr("Not a folder: %1").arg(folder);
    QFile file(dir.filePath(QStringLiteral("config.json")));
    if (!file.open(QIODevice::ReadOnly))
        return tr("No config.json in this folder: a Hugging Face checkpoint folder has config.json and "
                  "model.safetensors.");
    QJsonParseError error{};
    const QJsonObject c = QJsonDocument::fromJson(file.readAll(), &error).object();
    if (error.error != QJsonParseError::NoError)
        return tr("config.json is not valid JSON: %1").arg(error.errorString());
    const QString type = c.value(QStringLiteral("model_type")).toString();
    QStringList lines;
    lines << tr("%1: %2 layers, width %3, %4 heads, feed-forward %5")
                 .arg(type.isEmpty() ? tr("unknown model type") : type,
                      number(c, {"n_layers", "num_hidden_layers"}), number(c, {"dim", "hidden_size"}),
                      number(c, {"n_heads", "num_attention_heads"}), number(c, {"hidden_dim", "intermediate_size"}));
    lines << tr("vocabulary %1, %2 positions").arg(number(c, {"vocab_size"}), number(c, {"max_position_embeddings"}));
    const QJsonObject labels = c.value(QStringLiteral("id2label")).toObject();
    const QStringList architectures = c.value(QStringLiteral("architectures")).toVariant().toStringList();
    const bool classifier = architectures.join(QString()).contains(QLatin1String("SequenceClassification"));
    lines << (classifier ? tr("a classifier with %1 labels (a new head is made if the data has another count)")
                               .arg(labels.size())
                         : tr("a base model (%1): the classification head is initialised anew")
                               .arg(architectures.isEmpty() ? tr("no architecture named") : architectures.join(", ")));
    qint64 bytes = 0;
    QStringList weights;
    for (const QFileInfo& f : dir.entryInfoList({QStringLiteral("*.safetensors"), QStringLiteral("pytorch_model.bin")},
                                                QDir::Files, QDir::Name)) {
        bytes += f.size();
        weights << f.fileName();
    }
    lines << (weights.isEmpty() ? tr("No weights (model.safetensors or pytorch_model.bin) in this folder.")
                                : tr("weights: %1 (%2)").arg(weights.size() > 2 ? tr("%1 shards").arg(weights.size())
                                                                               : weights.join(", "),
                                                             formatBytes(bytes)));
    const bool tokenizer = dir.exists(QStringLiteral("vocab.txt")) || dir.exists(QStringLiteral("tokenizer.json"));
    lines << (tokenizer ? tr("tokenizer: %1").arg(dir.exists(QStringLiteral("tokenizer.json")) ? "tokenizer.json"
                                                                                              : "vocab.txt")
                        : tr("no tokenizer here: set data.tokenizer"));
    if (type != QLatin1String("bert") && type != QLatin1String("distilbert"))
        lines << tr("Hearth builds bert and distilbert checkpoints.");
    return lines.join(QLatin1Char('\n'));
}

}  // namespace hearth::ui
