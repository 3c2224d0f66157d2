#pragma once
// IdxImageReader: reads the images of an IDX file (MNIST / Fashion-MNIST, gzip or raw) so the
// sample browser can show the test images a model got wrong. Plain zlib; no engine internals.

#include <QImage>
#include <QString>

#include <cstdint>
#include <vector>

namespace hearth::ui {

class IdxImageReader {
public:
    // `path`: an idx3-ubyte file, optionally .gz. False with `error` set on failure.
    bool open(const QString& path, QString* error = nullptr);
    // The split's image file in an IDX data folder ("test" -> t10k-images-idx3-ubyte[.gz]).
    static QString imageFileFor(const QString& folder, const QString& split);

    bool isOpen() const { return m_count > 0; }
    QString path() const { return m_path; }
    int64_t count() const { return m_count; }
    int rows() const { return m_rows; }
    int columns() const { return m_columns; }
    // Grayscale image of sample `index`; null when out of range.
    QImage image(int64_t index) const;

private:
    QString m_path;
    std::vector<unsigned char> m_pixels;
    int64_t m_count = 0;
    int m_rows = 0;
    int m_columns = 0;
};

}  // namespace hearth::ui
