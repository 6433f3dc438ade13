// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "bfp/quantize.h"
#include "learning/gemm.h"
#include "learning/precision.h"

#include "common/enum_names.h"

namespace fastsim::learning {

/// A batch of samples, NCHW: batch x channels x height x width floats (a vector is C x 1 x 1).
struct Activation {
    std::vector<float> data;
    std::size_t batch = 0;
    int channels = 1, height = 1, width = 1;
    [[nodiscard]] std::size_t features() const {
        return static_cast<std::size_t>(channels) * static_cast<std::size_t>(height) * static_cast<std::size_t>(width);
    }
    void reshape(std::size_t b, int c, int h, int w) {
        batch = b;
        channels = c;
        height = h;
        width = w;
        data.resize(b * features());
    }
};

/// The six operands a GEMM layer quantises (docs/fast-training.md, "Where BFP is used"):
///   forward          Y  = A W^T : A along features, W along its input dimension
///   backward-data    dA = G W   : G along outputs,  W^T along outputs
///   weight gradient  dW = G^T A : G^T along the batch, A^T along the batch
enum class Operand : std::uint8_t {
    weights_forward,
    weights_backward,
    activations_forward,
    activations_wgrad,
    gradients_backward,
    gradients_wgrad
};
inline constexpr std::size_t kOperands = 6;
TensorClass tensor_class(Operand operand);

/// One layer's six quantisers, or none (the FP32 policy).
struct LayerQuantizers {
    std::vector<bfp::Quantizer> operands;  ///< indexed by Operand; empty = fp32
    [[nodiscard]] bfp::Quantizer* get(Operand o) {
        return operands.empty() ? nullptr : &operands[static_cast<std::size_t>(o)];
    }
};

/// What the layers' GEMMs run with: the path, one LayerQuantizers per GEMM layer, and an
/// observer shown each weight, activation and gradient tensor before it is quantised (FAST's
/// schedule measures r(X) there) in the iterations that set observe_this_iteration.
struct GemmContext {
    GemmPath path = GemmPath::fast;
    std::vector<LayerQuantizers>* quantizers = nullptr;  ///< null = fp32 everywhere
    std::function<void(std::size_t layer, TensorClass, const float*, std::size_t)> observe;
    bool observe_this_iteration = false;  ///< whether show() reaches `observe` (FAST checks every few iterations)
    GemmScratch scratch;

    /// Whether tensors shown now reach the observer (layers build a tensor only to show it then).
    [[nodiscard]] bool observing() const { return observe_this_iteration && observe; }
    [[nodiscard]] bfp::Quantizer* quantizer(std::size_t layer, Operand o) {
        return quantizers == nullptr ? nullptr : (*quantizers)[layer].get(o);
    }
    void show(std::size_t layer, TensorClass c, const float* values, std::size_t count) {
        if (observing()) observe(layer, c, values, count);
    }
};

/// Trainable parameters of a GEMM layer, all fp32: the master weights and the SGD state.
struct Parameters {
    std::vector<float> weights, bias;  ///< W: out x fan_in, row-major
    std::vector<float> weight_grad, bias_grad;
    std::vector<float> weight_velocity, bias_velocity;
};

/// Sizes of one GEMM layer, for costing it on the node.
struct GemmLayerShape {
    std::string name;
    bool conv = false;
    int in_channels = 0, in_height = 0, in_width = 0, filters = 0, kernel = 0, padding = 0;  ///< conv
    int in_features = 0, out_features = 0;                                                   ///< fc
};

class Layer {
public:
    virtual ~Layer() = default;
    virtual void forward(const Activation& in, Activation& out, GemmContext& ctx) = 0;
    /// `grad_in` is null when nothing consumes the input's gradient (the first layer).
    virtual void backward(const Activation& in, const Activation& out, const Activation& grad_out, Activation* grad_in,
                          GemmContext& ctx) = 0;
    virtual Parameters* parameters() { return nullptr; }
    [[nodiscard]] virtual std::optional<GemmLayerShape> gemm_shape() const { return std::nullopt; }
};

enum class NetworkKind : std::uint8_t {
    mlp,  ///< 784-256-128-10, ReLU
    cnn   ///< conv3x3(16) ReLU pool2, conv3x3(32) ReLU pool2, fc 1568-128 ReLU, fc 128-10
};
const EnumNames<NetworkKind, 2>& enum_names(NetworkKind);
inline std::string_view to_string(NetworkKind kind) { return name_of(kind); }

/// A feed-forward network on 28 x 28 single-channel images with 10 classes.
class Network {
public:
    /// Weights He-normal from `seed`, biases 0.
    Network(NetworkKind kind, std::uint64_t seed);

    /// Logits (batch x 10) of `input` (batch x 1 x 28 x 28); keeps `input` (which must
    /// outlive backward()) and what backward() needs.
    const Activation& forward(const Activation& input, GemmContext& ctx);
    /// Back-propagates d loss / d logits; fills every layer's gradients.
    void backward(const Activation& grad_logits, GemmContext& ctx);

    [[nodiscard]] std::size_t gemm_layer_count() const { return m_gemm_layers; }
    [[nodiscard]] std::vector<GemmLayerShape> gemm_shapes() const;
    [[nodiscard]] std::vector<Parameters*> parameters();
    [[nodiscard]] NetworkKind kind() const { return m_kind; }

private:
    NetworkKind m_kind;
    std::vector<std::unique_ptr<Layer>> m_layers;
    std::vector<Activation> m_outputs;  ///< m_outputs[i] = output of layer i
    std::vector<Activation> m_grads;
    const Activation* m_input = nullptr;
    std::size_t m_gemm_layers = 0;
};

/// The CNN's convolution (stride 1, zero padding) as a layer on its own, for tests: `index`
/// picks its quantisers in a GemmContext; weights He-normal from `seed`, biases 0.
std::unique_ptr<Layer> make_conv2d(std::size_t index, int channels, int height, int width, int filters, int kernel,
                                   int padding, std::uint64_t seed);

/// The CNN's fused ReLU + 2 x 2 max pooling (even input sizes), and a plain ReLU, for tests.
std::unique_ptr<Layer> make_relu_max_pool2();
std::unique_ptr<Layer> make_relu();

/// Mean softmax cross-entropy of `logits` (batch x classes) against `labels`; writes
/// d loss / d logits and returns (loss, correct predictions).
struct LossResult {
    double loss = 0;
    std::size_t correct = 0;
};
LossResult softmax_cross_entropy(const Activation& logits, const std::uint8_t* labels, Activation& grad_logits);

/// out (cols x rows) = in (rows x cols) transposed.
void transpose(const float* in, std::size_t rows, std::size_t cols, float* out);

}  // namespace fastsim::learning
