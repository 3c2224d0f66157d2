#pragma once
// IdxImages: the images of an IDX file (MNIST / Fashion-MNIST, gzip or raw) as QImages, decoded
// by the engine's torch-free, fuzzed reader (engine/data/formats/IdxFile), so that the report
// shows exactly what training read. Inflating a test file takes a while: the sample browser reads
// it on a pool thread.

#include "engine/data/formats/IdxFile.h"

#include <QImage>
#include <QString>

#include <cstdint>

namespace hearth::ui {

class IdxImages {
public:
    // Reads `path` (an idx3-ubyte file, optionally .gz). Throws hearth::DataError naming the file
    // and what is wrong with it.
    explicit IdxImages(const QString& path);
    // The split's image file in an IDX data folder ("test" -> t10k-images-idx3-ubyte[.gz]); ""
    // when the folder has none.
    static QString imageFileFor(const QString& folder, const QString& split);

    QString path() const { return m_path; }
    int64_t count() const { return m_file.dims[0]; }
    int rows() const { return static_cast<int>(m_file.dims[1]); }
    int columns() const { return static_cast<int>(m_file.dims[2]); }
    // Grayscale image of sample `index`; null when out of range.
    QImage image(int64_t index) const;

private:
    QString m_path;
    hearth::IdxFile m_file;
};

}  // namespace hearth::ui
