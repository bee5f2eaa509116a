// Runs one exported gluon-hub model through MXNet's C predict API (written by gluon-hub deploy).
//
// Usage: predict MODEL_DIR INPUT... [--dump-input FILE] [--repeat N]
// Each INPUT is a raw little-endian float32 tensor (.f32) of one model input, or, for a
// model that takes images, a binary PPM (P6) image preprocessed as the model's spec says.
// Prints {"outputs": [...], "top5": [...]} (top5 for classifiers) as one JSON line.
#include <cstdint>  // before the header, which uses uint32_t without including it
#include <mxnet/c_predict_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

struct Input {
  std::string name;
  std::vector<uint32_t> shape;
  size_t size() const {
    size_t n = 1;
    for (uint32_t d : shape) n *= d;
    return n;
  }
};

// The manifest model.txt: one "key value ..." per line.
struct Manifest {
  std::string symbol, params, labels;
  std::vector<Input> inputs;
  int outputs = 1;
  int resize = 0, crop = 0;  // 0: the model takes no images
  std::vector<float> mean, std;
};

[[noreturn]] void fail(const std::string& message) { throw std::runtime_error(message); }

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot read " + path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::string shape_text(const std::vector<uint32_t>& shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + ")";
}

Manifest read_manifest(const std::string& dir) {
  Manifest m;
  std::istringstream lines(read_file(dir + "/model.txt"));
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string key;
    if (!(words >> key) || key[0] == '#') continue;
    if (key == "symbol") { words >> m.symbol; m.symbol = dir + "/" + m.symbol; }
    else if (key == "params") { words >> m.params; m.params = dir + "/" + m.params; }
    else if (key == "labels") { words >> m.labels; m.labels = dir + "/" + m.labels; }
    else if (key == "outputs") words >> m.outputs;
    else if (key == "image") words >> m.resize >> m.crop;
    else if (key == "input") {
      Input input;
      words >> input.name;
      for (uint32_t d; words >> d;) input.shape.push_back(d);
      m.inputs.push_back(input);
    } else if (key == "mean" || key == "std") {
      std::vector<float>& values = key == "mean" ? m.mean : m.std;
      for (std::string v; words >> v;) values.push_back(std::strtof(v.c_str(), nullptr));
    }
  }
  if (m.inputs.empty()) fail(dir + "/model.txt names no input");
  return m;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::vector<float> read_f32(const std::string& path, const Input& input) {
  std::string bytes = read_file(path);
  size_t expected = input.size() * sizeof(float);
  if (bytes.size() != expected)
    fail(path + " holds " + std::to_string(bytes.size()) + " bytes, but input '" + input.name +
         "' of shape " + shape_text(input.shape) + " takes " + std::to_string(input.size()) +
         " float32 values (" + std::to_string(expected) + " bytes, little-endian)");
  std::vector<float> data(input.size());
  std::copy(bytes.begin(), bytes.end(), reinterpret_cast<char*>(data.data()));
  return data;
}

struct Image {
  int height = 0, width = 0;
  std::vector<unsigned char> rgb;  // HWC
};

// Binary PPM (P6, 8 bits): the one image format this program decodes (see docs/deploy.md).
Image read_ppm(const std::string& path) {
  std::string bytes = read_file(path);
  std::istringstream in(bytes);
  std::string magic;
  in >> magic;
  if (magic != "P6")
    fail("cannot decode image " + path + ": the C++ program reads binary PPM (P6) images and .f32 " +
         "tensors; convert the image first, for example with 'convert photo.jpg photo.ppm'");
  int values[3];
  for (int& v : values) {
    while (in >> std::ws && in.peek() == '#') in.ignore(1 << 20, '\n');
    if (!(in >> v) || v <= 0) fail("cannot decode image " + path + ": a malformed PPM header");
  }
  if (values[2] != 255) fail("cannot decode image " + path + ": only 8-bit PPM (maxval 255) is read");
  in.get();  // the one whitespace byte before the pixels
  Image image;
  image.width = values[0];
  image.height = values[1];
  size_t size = static_cast<size_t>(image.width) * image.height * 3;
  size_t start = static_cast<size_t>(in.tellg());
  if (bytes.size() - start < size) fail("cannot decode image " + path + ": the PPM file is truncated");
  image.rgb.assign(bytes.begin() + start, bytes.begin() + start + size);
  return image;
}

// OpenCV's INTER_LINEAR arithmetic (which MXNet's resize calls): 11-bit fixed-point weights,
// so the resized image equals the Python preset's to the bit.
void weights(int out, int in, std::vector<int>& first, std::vector<int>& second, std::vector<int>& w0,
             std::vector<int>& w1) {
  double scale = static_cast<double>(in) / out;
  for (int o = 0; o < out; ++o) {
    float position = static_cast<float>((o + 0.5) * scale - 0.5);
    float floor = std::floor(position);
    int index = static_cast<int>(floor);
    float fraction = position - floor;
    if (index < 0 || index >= in - 1) fraction = 0.0f;
    index = std::min(std::max(index, 0), in - 1);
    first.push_back(index);
    second.push_back(std::min(index + 1, in - 1));
    w1.push_back(static_cast<int>(std::nearbyint(fraction * 2048.0f)));
    w0.push_back(static_cast<int>(std::nearbyint((1.0f - fraction) * 2048.0f)));
  }
}

Image resize(const Image& image, int height, int width) {
  if (height == image.height && width == image.width) return image;
  std::vector<int> x0, x1, a0, a1, y0, y1, b0, b1;
  weights(width, image.width, x0, x1, a0, a1);
  weights(height, image.height, y0, y1, b0, b1);
  auto row = [&](int y, int x, int c) {
    const unsigned char* p = &image.rgb[static_cast<size_t>(y) * image.width * 3];
    return p[x0[x] * 3 + c] * a0[x] + p[x1[x] * 3 + c] * a1[x];
  };
  Image out;
  out.height = height;
  out.width = width;
  out.rgb.resize(static_cast<size_t>(height) * width * 3);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      for (int c = 0; c < 3; ++c) {
        int top = (b0[y] * (row(y0[y], x, c) >> 4)) >> 16;
        int bottom = (b1[y] * (row(y1[y], x, c) >> 4)) >> 16;
        int value = (top + bottom + 2) >> 2;
        out.rgb[(static_cast<size_t>(y) * width + x) * 3 + c] =
            static_cast<unsigned char>(std::min(std::max(value, 0), 255));
      }
  return out;
}

// Shorter side to `resize`, centre crop, [0, 1], mean/std, HWC to CHW.
std::vector<float> preprocess(const std::string& path, const Manifest& m, const Input& input) {
  if (!m.crop) fail("model input '" + input.name + "' takes no images; give a .f32 tensor of shape " + shape_text(input.shape));
  if (input.shape[0] != 1) fail("an image fills batch 1; input '" + input.name + "' has shape " + shape_text(input.shape));
  Image image = read_ppm(path);
  int height, width;
  if (image.height <= image.width) {
    height = m.resize;
    width = static_cast<int>(static_cast<long long>(image.width) * m.resize / image.height);
  } else {
    height = static_cast<int>(static_cast<long long>(image.height) * m.resize / image.width);
    width = m.resize;
  }
  Image resized = resize(image, height, width);
  int top = (height - m.crop) / 2, left = (width - m.crop) / 2;
  if (top < 0 || left < 0) fail("the image is too small to crop " + std::to_string(m.crop) + " pixels");
  std::vector<float> tensor(3 * static_cast<size_t>(m.crop) * m.crop);
  for (int c = 0; c < 3; ++c)
    for (int y = 0; y < m.crop; ++y)
      for (int x = 0; x < m.crop; ++x) {
        float value = resized.rgb[(static_cast<size_t>(top + y) * width + left + x) * 3 + c] / 255.0f;
        if (!m.mean.empty()) value = (value - m.mean[c]) / m.std[c];
        tensor[(static_cast<size_t>(c) * m.crop + y) * m.crop + x] = value;
      }
  return tensor;
}

void check(int status, const char* call) {
  if (status != 0) fail(std::string(call) + " failed: " + MXGetLastError());
}

void print_number(std::string& out, double value) {
  if (!std::isfinite(value)) { out += "null"; return; }
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", value);
  out += text;
}

void print_nested(std::string& out, const float* data, const uint32_t* shape, uint32_t ndim, size_t& at) {
  if (ndim == 0) { print_number(out, data[at++]); return; }
  out += '[';
  for (uint32_t i = 0; i < shape[0]; ++i) {
    if (i) out += ", ";
    print_nested(out, data, shape + 1, ndim - 1, at);
  }
  out += ']';
}

void print_string(std::string& out, const std::string& text) {
  out += '"';
  for (char ch : text) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  out += '"';
}

int run(int argc, char** argv) {
  if (argc < 3) fail("usage: predict MODEL_DIR INPUT... [--dump-input FILE] [--repeat N]");
  std::string dir = argv[1], dump;
  int repeat = 0;
  std::vector<std::string> files;
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    if ((arg == "--dump-input" || arg == "--repeat") && i + 1 >= argc) fail(arg + " needs a value");
    if (arg == "--dump-input") dump = argv[++i];
    else if (arg == "--repeat") repeat = std::atoi(argv[++i]);
    else files.push_back(arg);
  }
  Manifest m = read_manifest(dir);
  if (files.size() != m.inputs.size())
    fail("the model takes " + std::to_string(m.inputs.size()) + " input(s), one file each; got " +
         std::to_string(files.size()));
  // Every input is read and checked before the model is loaded: a bad file fails fast.
  std::vector<std::vector<float>> data;
  for (size_t i = 0; i < files.size(); ++i)
    data.push_back(ends_with(files[i], ".f32") ? read_f32(files[i], m.inputs[i])
                                                : preprocess(files[i], m, m.inputs[i]));
  if (!dump.empty()) {
    std::ofstream out(dump, std::ios::binary);
    out.write(reinterpret_cast<const char*>(data[0].data()), data[0].size() * sizeof(float));
    if (!out) fail("cannot write " + dump);
  }

  std::string symbol = read_file(m.symbol), params = read_file(m.params);
  std::vector<const char*> keys;
  std::vector<uint32_t> indptr{0}, shapes;
  for (const Input& input : m.inputs) {
    keys.push_back(input.name.c_str());
    shapes.insert(shapes.end(), input.shape.begin(), input.shape.end());
    indptr.push_back(static_cast<uint32_t>(shapes.size()));
  }
  PredictorHandle handle = nullptr;
  check(MXPredCreate(symbol.c_str(), params.data(), static_cast<int>(params.size()), 1, 0,
                     static_cast<uint32_t>(keys.size()), keys.data(), indptr.data(), shapes.data(), &handle),
        "MXPredCreate");
  for (size_t i = 0; i < data.size(); ++i)
    check(MXPredSetInput(handle, keys[i], data[i].data(), static_cast<uint32_t>(data[i].size())), "MXPredSetInput");
  check(MXPredForward(handle), "MXPredForward");
  std::vector<double> times;
  for (int r = 0; r < repeat; ++r) {
    auto start = std::chrono::steady_clock::now();
    for (size_t i = 0; i < data.size(); ++i)
      check(MXPredSetInput(handle, keys[i], data[i].data(), static_cast<uint32_t>(data[i].size())), "MXPredSetInput");
    check(MXPredForward(handle), "MXPredForward");
    std::vector<float> sink;
    for (int o = 0; o < m.outputs; ++o) {
      uint32_t *shape, ndim;
      check(MXPredGetOutputShape(handle, o, &shape, &ndim), "MXPredGetOutputShape");
      size_t size = 1;
      for (uint32_t d = 0; d < ndim; ++d) size *= shape[d];
      sink.resize(size);
      check(MXPredGetOutput(handle, o, sink.data(), static_cast<uint32_t>(size)), "MXPredGetOutput");
    }
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }

  std::string out = "{\"outputs\": [";
  std::vector<float> first;
  for (int o = 0; o < m.outputs; ++o) {
    uint32_t *shape, ndim;
    check(MXPredGetOutputShape(handle, o, &shape, &ndim), "MXPredGetOutputShape");
    std::vector<uint32_t> dims(shape, shape + ndim);  // valid only until the next call
    size_t size = 1;
    for (uint32_t d : dims) size *= d;
    std::vector<float> values(size);
    check(MXPredGetOutput(handle, o, values.data(), static_cast<uint32_t>(size)), "MXPredGetOutput");
    if (o) out += ", ";
    size_t at = 0;
    print_nested(out, values.data(), dims.data(), ndim, at);
    if (o == 0 && ndim >= 1) first.assign(values.begin(), values.begin() + size / dims[0]);
  }
  out += "]";
  MXPredFree(handle);

  if (!m.labels.empty() && !first.empty()) {  // a classifier: softmax of the first row, best five
    std::vector<std::string> labels;
    std::istringstream lines(read_file(m.labels));
    for (std::string line; std::getline(lines, line);) labels.push_back(line);
    double top = *std::max_element(first.begin(), first.end()), total = 0;
    std::vector<double> probs;
    for (float v : first) total += probs.emplace_back(std::exp(v - top));
    std::vector<size_t> order(first.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    size_t k = std::min<size_t>(5, order.size());
    std::partial_sort(order.begin(), order.begin() + k, order.end(),
                      [&](size_t a, size_t b) { return probs[a] > probs[b] || (probs[a] == probs[b] && a < b); });
    out += ", \"top5\": [";
    for (size_t i = 0; i < k; ++i) {
      size_t c = order[i];
      out += i ? ", {\"label\": " : "{\"label\": ";
      print_string(out, c < labels.size() ? labels[c] : "class " + std::to_string(c));
      out += ", \"index\": " + std::to_string(c) + ", \"score\": ";
      print_number(out, probs[c] / total);
      out += "}";
    }
    out += "]";
  }
  if (repeat > 0) {
    std::sort(times.begin(), times.end());
    out += ", \"latency_ms\": {\"median\": ";
    print_number(out, times[times.size() / 2]);
    out += ", \"rounds\": " + std::to_string(repeat) + "}";
  }
  std::printf("%s}\n", out.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "error: %s\n", error.what());
    return 1;
  }
}
