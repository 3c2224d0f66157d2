#include "ui/report/IdxImages.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>

#include <algorithm>

namespace hearth::ui {

IdxImages::IdxImages(const QString& path)
    : m_path(path), m_file(hearth::readIdxFile(QFile::encodeName(path).toStdString(), /*expected_rank=*/3))
{
}

QString IdxImages::imageFileFor(const QString& folder, const QString& split)
{
    const QString prefix = split == QLatin1String("test") ? QStringLiteral("t10k") : QStringLiteral("train");
    const QDir dir(folder);
    for (const QString& name : {prefix + QStringLiteral("-images-idx3-ubyte"),
                                prefix + QStringLiteral("-images-idx3-ubyte.gz")}) {
        if (QFileInfo::exists(dir.filePath(name)))
            return dir.filePath(name);
    }
    return {};
}

QImage IdxImages::image(int64_t index) const
{
    if (index < 0 || index >= count())
        return {};
    const int width = columns();
    QImage img(width, rows(), QImage::Format_Grayscale8);
    const uint8_t* src = m_file.payload() + index * rows() * width;
    for (int y = 0; y < rows(); ++y)
        std::copy(src + qsizetype(y) * width, src + qsizetype(y + 1) * width, img.scanLine(y));
    return img;
}

}  // namespace hearth::ui
