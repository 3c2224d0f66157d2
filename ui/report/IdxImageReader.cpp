#include "ui/report/IdxImageReader.h"

#include <QDir>
#include <QFileInfo>

#include <zlib.h>

#include <array>

namespace hearth::ui {

namespace {

uint32_t bigEndian(const unsigned char* b)
{
    return (uint32_t(b[0]) << 24) | (uint32_t(b[1]) << 16) | (uint32_t(b[2]) << 8) | uint32_t(b[3]);
}

// gzread reads plain files too (gzdirect), so one path handles .gz and raw.
bool readAll(const QString& path, std::vector<unsigned char>& out, QString* error)
{
    gzFile file = gzopen(QFile::encodeName(path).constData(), "rb");
    if (!file) {
        if (error)
            *error = QObject::tr("%1: cannot open").arg(path);
        return false;
    }
    std::array<unsigned char, 1 << 16> chunk{};
    int n = 0;
    while ((n = gzread(file, chunk.data(), static_cast<unsigned>(chunk.size()))) > 0)
        out.insert(out.end(), chunk.begin(), chunk.begin() + n);
    const bool ok = n == 0;
    gzclose(file);
    if (!ok && error)
        *error = QObject::tr("%1: corrupt or truncated gzip data").arg(path);
    return ok;
}

}  // namespace

QString IdxImageReader::imageFileFor(const QString& folder, const QString& split)
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

bool IdxImageReader::open(const QString& path, QString* error)
{
    std::vector<unsigned char> bytes;
    if (!readAll(path, bytes, error))
        return false;
    if (bytes.size() < 16 || bytes[0] != 0 || bytes[1] != 0 || bytes[2] != 0x08 || bytes[3] != 3) {
        if (error)
            *error = QObject::tr("%1: not an IDX image file (magic 0x00000803 expected)").arg(path);
        return false;
    }
    const int64_t count = bigEndian(&bytes[4]);
    const int rows = static_cast<int>(bigEndian(&bytes[8]));
    const int columns = static_cast<int>(bigEndian(&bytes[12]));
    const auto needed = static_cast<size_t>(16 + count * rows * columns);
    if (rows <= 0 || columns <= 0 || bytes.size() < needed) {
        if (error)
            *error = QObject::tr("%1: holds %2 of the %3 bytes its header promises").arg(path).arg(bytes.size()).arg(needed);
        return false;
    }
    m_pixels.assign(bytes.begin() + 16, bytes.begin() + static_cast<std::ptrdiff_t>(needed));
    m_count = count;
    m_rows = rows;
    m_columns = columns;
    m_path = path;
    return true;
}

QImage IdxImageReader::image(int64_t index) const
{
    if (index < 0 || index >= m_count)
        return {};
    QImage img(m_columns, m_rows, QImage::Format_Grayscale8);
    const qsizetype columns = m_columns;
    const unsigned char* src = m_pixels.data() + qsizetype(index) * m_rows * columns;
    for (int y = 0; y < m_rows; ++y) std::copy(src + y * columns, src + (y + 1) * columns, img.scanLine(y));
    return img;
}

}  // namespace hearth::ui
