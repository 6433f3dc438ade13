// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace fastsim::learning {

/// Where Debian's dataset-fashion-mnist package installs the IDX files.
inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

/// A missing, unreadable, truncated or malformed data file; what() names the file.
class DatasetError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Labelled images, one row of `pixels()` floats per sample.
struct Dataset {
    std::size_t count = 0;
    std::size_t height = 0, width = 0;
    std::vector<float> images;         ///< count x (height * width), normalised (see load_idx)
    std::vector<std::uint8_t> labels;  ///< count entries, each < kClasses
    [[nodiscard]] std::size_t pixels() const { return height * width; }
};

inline constexpr int kClasses = 10;
/// Fashion-MNIST training-set pixel mean and standard deviation (of pixel / 255).
inline constexpr float kPixelMean = 0.2860f;
inline constexpr float kPixelStd = 0.3530f;

/// Reads an IDX image file (magic 0x00000803, u8 pixels) and its IDX label file (magic
/// 0x00000801), gzip-compressed or plain, keeping the first `limit` samples (0 = all).
/// Pixels become (p / 255 - kPixelMean) / kPixelStd. Throws DatasetError naming the file for
/// a missing file, a gzip error, a wrong magic, a short file, trailing bytes, counts that
/// differ between the two files, a label above 9, or a header announcing over 2^31 pixels.
Dataset load_idx(const std::string& images_path, const std::string& labels_path, std::size_t limit = 0);

struct FashionMnist {
    Dataset train;  ///< train-images-idx3-ubyte.gz, 60,000 samples
    Dataset test;   ///< t10k-images-idx3-ubyte.gz, 10,000 samples
};

/// Both splits from `dir` (the four *-ubyte.gz files), each cut to its limit (0 = all);
/// DatasetError unless the images are 28 x 28.
FashionMnist load_fashion_mnist(const std::string& dir, std::size_t train_limit = 0, std::size_t test_limit = 0);

}  // namespace fastsim::learning
