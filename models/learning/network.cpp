// SPDX-License-Identifier: MIT
#include "learning/network.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "learning/dataset.h"

namespace fastsim::learning {

TensorClass tensor_class(Operand operand) {
    switch (operand) {
    case Operand::weights_forward:
    case Operand::weights_backward: return TensorClass::weights;
    case Operand::activations_forward:
    case Operand::activations_wgrad: return TensorClass::activations;
    case Operand::gradients_backward:
    case Operand::gradients_wgrad: return TensorClass::gradients;
    }
    return TensorClass::weights;
}

const EnumNames<NetworkKind, 2>& enum_names(NetworkKind) {
    static constexpr EnumNames<NetworkKind, 2> kNames{{{"mlp", NetworkKind::mlp}, {"cnn", NetworkKind::cnn}}};
    return kNames;
}

void transpose(const float* in, std::size_t rows, std::size_t cols, float* out) {
    constexpr std::size_t kBlock = 32;
    for (std::size_t r0 = 0; r0 < rows; r0 += kBlock)
        for (std::size_t c0 = 0; c0 < cols; c0 += kBlock) {
            const std::size_t r1 = std::min(rows, r0 + kBlock), c1 = std::min(cols, c0 + kBlock);
            for (std::size_t r = r0; r < r1; ++r)
                for (std::size_t c = c0; c < c1; ++c) out[c * rows + r] = in[r * cols + c];
        }
}

namespace {

void init_parameters(Parameters& p, std::size_t out, std::size_t fan_in, std::mt19937_64& rng) {
    std::normal_distribution<float> normal(0.0f, std::sqrt(2.0f / static_cast<float>(fan_in)));
    p.weights.resize(out * fan_in);
    for (float& w : p.weights) w = normal(rng);
    p.bias.assign(out, 0.0f);
    p.weight_grad.assign(p.weights.size(), 0.0f);
    p.bias_grad.assign(out, 0.0f);
    p.weight_velocity.assign(p.weights.size(), 0.0f);
    p.bias_velocity.assign(out, 0.0f);
}

/// The shared GEMM step of both weighted layers, on row-major matrices:
/// forward Y (m x out) = A (m x in) W^T; backward dA = G W and dW = G^T A. BFP operands are
/// transposed where needed so that every group is contiguous along the GEMM's k.
class GemmLayer : public Layer {
protected:
    GemmLayer(std::size_t index, std::size_t out, std::size_t fan_in) : m_index(index), m_out(out), m_fan_in(fan_in) {}

    void gemm_forward(const float* a, std::size_t m, float* y, GemmContext& ctx) {
        ctx.show(m_index, TensorClass::weights, m_params.weights.data(), m_params.weights.size());
        gemm_abt(ctx.path, a, m_params.weights.data(), m, m_out, m_fan_in,
                 ctx.quantizer(m_index, Operand::activations_forward), ctx.quantizer(m_index, Operand::weights_forward), y,
                 ctx.scratch);
    }

    /// `g` is m x out; writes dW (and dA if `da`).
    void gemm_backward(const float* a, const float* g, std::size_t m, float* da, GemmContext& ctx) {
        ctx.show(m_index, TensorClass::gradients, g, m * m_out);
        if (da != nullptr && ctx.quantizers == nullptr) {
            sgemm_ab(g, m_params.weights.data(), m, m_fan_in, m_out, da);  // fp32: W as it is
        } else if (da != nullptr) {
            m_wt.resize(m_params.weights.size());
            transpose(m_params.weights.data(), m_out, m_fan_in, m_wt.data());
            gemm_abt(ctx.path, g, m_wt.data(), m, m_fan_in, m_out, ctx.quantizer(m_index, Operand::gradients_backward),
                     ctx.quantizer(m_index, Operand::weights_backward), da, ctx.scratch);
        }
        bfp::Quantizer* qg = ctx.quantizer(m_index, Operand::gradients_wgrad);
        bfp::Quantizer* qa = ctx.quantizer(m_index, Operand::activations_wgrad);
        if (qg == nullptr && qa == nullptr) {
            sgemm_atb(g, a, m_out, m_fan_in, m, m_params.weight_grad.data());  // fp32: no transposes needed
        } else {
            // Both operands grouped along the batch: transposed, so each group is contiguous.
            m_gt.resize(m * m_out);
            transpose(g, m, m_out, m_gt.data());
            m_at.resize(m * m_fan_in);
            transpose(a, m, m_fan_in, m_at.data());
            gemm_abt(ctx.path, m_gt.data(), m_at.data(), m_out, m_fan_in, m, qg, qa, m_params.weight_grad.data(),
                     ctx.scratch);
        }
        std::fill(m_params.bias_grad.begin(), m_params.bias_grad.end(), 0.0f);
        for (std::size_t r = 0; r < m; ++r)
            for (std::size_t j = 0; j < m_out; ++j) m_params.bias_grad[j] += g[r * m_out + j];
    }

    std::size_t m_index, m_out, m_fan_in;
    Parameters m_params;
    std::vector<float> m_wt, m_gt, m_at;

public:
    Parameters* parameters() override { return &m_params; }
};

class Dense final : public GemmLayer {
public:
    Dense(std::string name, std::size_t index, int in, int out, std::mt19937_64& rng)
        : GemmLayer(index, static_cast<std::size_t>(out), static_cast<std::size_t>(in)), m_name(std::move(name)) {
        init_parameters(m_params, m_out, m_fan_in, rng);
    }

    void forward(const Activation& in, Activation& out, GemmContext& ctx) override {
        if (in.features() != m_fan_in) throw std::logic_error(m_name + ": input has the wrong size");
        ctx.show(m_index, TensorClass::activations, in.data.data(), in.data.size());
        out.reshape(in.batch, static_cast<int>(m_out), 1, 1);
        gemm_forward(in.data.data(), in.batch, out.data.data(), ctx);
        for (std::size_t r = 0; r < in.batch; ++r)
            for (std::size_t j = 0; j < m_out; ++j) out.data[r * m_out + j] += m_params.bias[j];
    }

    void backward(const Activation& in, const Activation&, const Activation& grad_out, Activation* grad_in,
                  GemmContext& ctx) override {
        if (grad_in != nullptr) grad_in->reshape(in.batch, in.channels, in.height, in.width);
        gemm_backward(in.data.data(), grad_out.data.data(), in.batch, grad_in ? grad_in->data.data() : nullptr, ctx);
    }

    [[nodiscard]] std::optional<GemmLayerShape> gemm_shape() const override {
        GemmLayerShape s;
        s.name = m_name;
        s.in_features = static_cast<int>(m_fan_in);
        s.out_features = static_cast<int>(m_out);
        return s;
    }

private:
    std::string m_name;
};

/// Stride-1 convolution with zero padding, lowered by im2col: rows (b, oy, ox), columns
/// (c, ky, kx), so W is filters x (C k k) and the GEMM is (B OH OW) x (C k k) x filters.
class Conv2d final : public GemmLayer {
public:
    Conv2d(std::string name, std::size_t index, int channels, int height, int width, int filters, int kernel,
           int padding, std::mt19937_64& rng)
        : GemmLayer(index, static_cast<std::size_t>(filters),
                    static_cast<std::size_t>(channels) * static_cast<std::size_t>(kernel * kernel)),
          m_name(std::move(name)), m_channels(channels), m_height(height), m_width(width), m_kernel(kernel),
          m_padding(padding), m_out_height(height + 2 * padding - kernel + 1), m_out_width(width + 2 * padding - kernel + 1) {
        init_parameters(m_params, m_out, m_fan_in, rng);
    }

    void forward(const Activation& in, Activation& out, GemmContext& ctx) override {
        if (in.channels != m_channels || in.height != m_height || in.width != m_width)
            throw std::logic_error(m_name + ": input has the wrong shape");
        ctx.show(m_index, TensorClass::activations, in.data.data(), in.data.size());
        const std::size_t rows = in.batch * pixels_out();
        im2col(in);
        m_y.resize(rows * m_out);
        gemm_forward(m_cols.data(), rows, m_y.data(), ctx);
        out.reshape(in.batch, static_cast<int>(m_out), m_out_height, m_out_width);
        for (std::size_t b = 0; b < in.batch; ++b)
            for (std::size_t p = 0; p < pixels_out(); ++p)
                for (std::size_t f = 0; f < m_out; ++f)
                    out.data[(b * m_out + f) * pixels_out() + p] = m_y[(b * pixels_out() + p) * m_out + f] + m_params.bias[f];
    }

    void backward(const Activation& in, const Activation&, const Activation& grad_out, Activation* grad_in,
                  GemmContext& ctx) override {
        const std::size_t rows = in.batch * pixels_out();
        m_g.resize(rows * m_out);
        for (std::size_t b = 0; b < in.batch; ++b)
            for (std::size_t f = 0; f < m_out; ++f)
                for (std::size_t p = 0; p < pixels_out(); ++p)
                    m_g[(b * pixels_out() + p) * m_out + f] = grad_out.data[(b * m_out + f) * pixels_out() + p];
        std::vector<float>* dcols = nullptr;
        if (grad_in != nullptr) {
            m_dcols.resize(rows * m_fan_in);
            dcols = &m_dcols;
        }
        gemm_backward(m_cols.data(), m_g.data(), rows, dcols ? dcols->data() : nullptr, ctx);
        if (grad_in != nullptr) {
            grad_in->reshape(in.batch, in.channels, in.height, in.width);
            col2im(*grad_in);
        }
    }

    [[nodiscard]] std::optional<GemmLayerShape> gemm_shape() const override {
        GemmLayerShape s;
        s.name = m_name;
        s.conv = true;
        s.in_channels = m_channels;
        s.in_height = m_height;
        s.in_width = m_width;
        s.filters = static_cast<int>(m_out);
        s.kernel = m_kernel;
        s.padding = m_padding;
        return s;
    }

private:
    [[nodiscard]] std::size_t pixels_out() const {
        return static_cast<std::size_t>(m_out_height) * static_cast<std::size_t>(m_out_width);
    }

    /// Row (b, oy, ox) of the im2col matrix: column (c, ky, kx) holds input (b, c, oy+ky-p, ox+kx-p),
    /// 0 in the padding. `visit(column, input index or -1)` for every column of the row.
    template <typename Visit>
    void for_each_column(std::size_t b, int oy, int ox, Visit&& visit) const {
        std::size_t col = 0;
        const std::size_t plane = static_cast<std::size_t>(m_height) * static_cast<std::size_t>(m_width);
        for (int c = 0; c < m_channels; ++c) {
            const std::size_t base = (b * static_cast<std::size_t>(m_channels) + static_cast<std::size_t>(c)) * plane;
            for (int ky = 0; ky < m_kernel; ++ky) {
                const int y = oy + ky - m_padding;
                for (int kx = 0; kx < m_kernel; ++kx, ++col) {
                    const int x = ox + kx - m_padding;
                    const bool inside = y >= 0 && y < m_height && x >= 0 && x < m_width;
                    visit(col, inside ? static_cast<std::ptrdiff_t>(base + static_cast<std::size_t>(y * m_width + x)) : -1);
                }
            }
        }
    }

    void im2col(const Activation& in) {
        m_cols.resize(in.batch * pixels_out() * m_fan_in);
        float* row = m_cols.data();
        for (std::size_t b = 0; b < in.batch; ++b)
            for (int oy = 0; oy < m_out_height; ++oy)
                for (int ox = 0; ox < m_out_width; ++ox, row += m_fan_in)
                    for_each_column(b, oy, ox, [&](std::size_t col, std::ptrdiff_t from) {
                        row[col] = from < 0 ? 0.0f : in.data[static_cast<std::size_t>(from)];
                    });
    }

    void col2im(Activation& grad_in) const {
        std::fill(grad_in.data.begin(), grad_in.data.end(), 0.0f);
        const float* row = m_dcols.data();
        for (std::size_t b = 0; b < grad_in.batch; ++b)
            for (int oy = 0; oy < m_out_height; ++oy)
                for (int ox = 0; ox < m_out_width; ++ox, row += m_fan_in)
                    for_each_column(b, oy, ox, [&](std::size_t col, std::ptrdiff_t to) {
                        if (to >= 0) grad_in.data[static_cast<std::size_t>(to)] += row[col];
                    });
    }

    std::string m_name;
    int m_channels, m_height, m_width, m_kernel, m_padding, m_out_height, m_out_width;
    std::vector<float> m_cols, m_y, m_g, m_dcols;
};

class Relu final : public Layer {
public:
    void forward(const Activation& in, Activation& out, GemmContext&) override {
        out.reshape(in.batch, in.channels, in.height, in.width);
        for (std::size_t i = 0; i < in.data.size(); ++i) out.data[i] = in.data[i] > 0.0f ? in.data[i] : 0.0f;
    }
    void backward(const Activation& in, const Activation&, const Activation& grad_out, Activation* grad_in,
                  GemmContext&) override {
        grad_in->reshape(in.batch, in.channels, in.height, in.width);
        for (std::size_t i = 0; i < in.data.size(); ++i) grad_in->data[i] = in.data[i] > 0.0f ? grad_out.data[i] : 0.0f;
    }
};

/// 2 x 2 max pooling, stride 2 (even input sizes).
class MaxPool2 final : public Layer {
public:
    void forward(const Activation& in, Activation& out, GemmContext&) override {
        const int oh = in.height / 2, ow = in.width / 2;
        out.reshape(in.batch, in.channels, oh, ow);
        m_argmax.resize(out.data.size());
        std::size_t o = 0;
        for (std::size_t plane = 0; plane < in.batch * static_cast<std::size_t>(in.channels); ++plane)
            for (int y = 0; y < oh; ++y)
                for (int x = 0; x < ow; ++x, ++o) {
                    const std::size_t base = plane * static_cast<std::size_t>(in.height * in.width);
                    std::size_t best = base + static_cast<std::size_t>(2 * y * in.width + 2 * x);
                    for (int dy = 0; dy < 2; ++dy)
                        for (int dx = 0; dx < 2; ++dx) {
                            const std::size_t i = base + static_cast<std::size_t>((2 * y + dy) * in.width + 2 * x + dx);
                            if (in.data[i] > in.data[best]) best = i;
                        }
                    out.data[o] = in.data[best];
                    m_argmax[o] = best;
                }
    }
    void backward(const Activation& in, const Activation&, const Activation& grad_out, Activation* grad_in,
                  GemmContext&) override {
        grad_in->reshape(in.batch, in.channels, in.height, in.width);
        std::fill(grad_in->data.begin(), grad_in->data.end(), 0.0f);
        for (std::size_t o = 0; o < grad_out.data.size(); ++o) grad_in->data[m_argmax[o]] += grad_out.data[o];
    }

private:
    std::vector<std::size_t> m_argmax;
};

}  // namespace

Network::Network(NetworkKind kind, std::uint64_t seed) : m_kind(kind) {
    std::mt19937_64 rng(seed);
    if (kind == NetworkKind::mlp) {
        m_layers.push_back(std::make_unique<Dense>("fc1", 0, 784, 256, rng));
        m_layers.push_back(std::make_unique<Relu>());
        m_layers.push_back(std::make_unique<Dense>("fc2", 1, 256, 128, rng));
        m_layers.push_back(std::make_unique<Relu>());
        m_layers.push_back(std::make_unique<Dense>("fc3", 2, 128, kClasses, rng));
        m_gemm_layers = 3;
    } else {
        m_layers.push_back(std::make_unique<Conv2d>("conv1", 0, 1, 28, 28, 16, 3, 1, rng));
        m_layers.push_back(std::make_unique<Relu>());
        m_layers.push_back(std::make_unique<MaxPool2>());
        m_layers.push_back(std::make_unique<Conv2d>("conv2", 1, 16, 14, 14, 32, 3, 1, rng));
        m_layers.push_back(std::make_unique<Relu>());
        m_layers.push_back(std::make_unique<MaxPool2>());
        m_layers.push_back(std::make_unique<Dense>("fc1", 2, 32 * 7 * 7, 128, rng));
        m_layers.push_back(std::make_unique<Relu>());
        m_layers.push_back(std::make_unique<Dense>("fc2", 3, 128, kClasses, rng));
        m_gemm_layers = 4;
    }
    m_outputs.resize(m_layers.size());
    m_grads.resize(m_layers.size());
}

const Activation& Network::forward(const Activation& input, GemmContext& ctx) {
    m_input = &input;
    const Activation* in = &input;
    for (std::size_t i = 0; i < m_layers.size(); ++i) {
        m_layers[i]->forward(*in, m_outputs[i], ctx);
        in = &m_outputs[i];
    }
    return m_outputs.back();
}

void Network::backward(const Activation& grad_logits, GemmContext& ctx) {
    const Activation* grad = &grad_logits;
    for (std::size_t i = m_layers.size(); i-- > 0;) {
        const Activation& in = i == 0 ? *m_input : m_outputs[i - 1];
        Activation* grad_in = i == 0 ? nullptr : &m_grads[i - 1];
        m_layers[i]->backward(in, m_outputs[i], *grad, grad_in, ctx);
        grad = grad_in;
    }
}

std::vector<GemmLayerShape> Network::gemm_shapes() const {
    std::vector<GemmLayerShape> shapes;
    for (const auto& layer : m_layers)
        if (auto s = layer->gemm_shape()) shapes.push_back(*s);
    return shapes;
}

std::vector<Parameters*> Network::parameters() {
    std::vector<Parameters*> out;
    for (auto& layer : m_layers)
        if (Parameters* p = layer->parameters()) out.push_back(p);
    return out;
}

LossResult softmax_cross_entropy(const Activation& logits, const std::uint8_t* labels, Activation& grad_logits) {
    const std::size_t classes = logits.features();
    grad_logits.reshape(logits.batch, logits.channels, logits.height, logits.width);
    LossResult result;
    const float inv_batch = 1.0f / static_cast<float>(logits.batch);
    for (std::size_t b = 0; b < logits.batch; ++b) {
        const float* z = &logits.data[b * classes];
        float* g = &grad_logits.data[b * classes];
        const std::size_t predicted = static_cast<std::size_t>(std::max_element(z, z + classes) - z);
        if (predicted == labels[b]) ++result.correct;
        const float top = z[predicted];
        double total = 0;
        for (std::size_t j = 0; j < classes; ++j) total += std::exp(static_cast<double>(z[j] - top));
        const double log_total = std::log(total);
        result.loss += log_total - static_cast<double>(z[labels[b]] - top);
        for (std::size_t j = 0; j < classes; ++j) {
            const double p = std::exp(static_cast<double>(z[j] - top) - log_total);
            g[j] = static_cast<float>(p - (j == labels[b] ? 1.0 : 0.0)) * inv_batch;
        }
    }
    result.loss /= static_cast<double>(logits.batch);
    return result;
}

}  // namespace fastsim::learning
