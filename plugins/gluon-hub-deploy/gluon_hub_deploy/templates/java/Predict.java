// Runs one exported gluon-hub model through MXNet's C predict API with JNA (written by gluon-hub deploy).
//
// Usage: java Predict MODEL_DIR INPUT... [--dump-input FILE] [--repeat N]
// Each INPUT is a raw little-endian float32 tensor (.f32) of one model input, or, for a
// model that takes images, a JPEG/PNG/BMP/GIF image (decoded by ImageIO) preprocessed as
// the model's spec says. Prints {"outputs": [...], "top5": [...]} as one JSON line.
import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.PointerByReference;

import java.awt.image.BufferedImage;
import java.awt.image.Raster;
import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import javax.imageio.ImageIO;

public final class Predict {
    /** The functions of c_predict_api.h this program calls. */
    public interface MXNet extends Library {
        String MXGetLastError();
        int MXPredCreate(String symbol, byte[] params, int size, int devType, int devId, int numInputs,
                         String[] keys, int[] indptr, int[] shapes, PointerByReference out);
        int MXPredSetInput(Pointer handle, String key, float[] data, int size);
        int MXPredForward(Pointer handle);
        int MXPredGetOutputShape(Pointer handle, int index, PointerByReference shape, IntByReference ndim);
        int MXPredGetOutput(Pointer handle, int index, float[] data, int size);
        int MXPredFree(Pointer handle);
    }

    static final class Failure extends Exception {
        Failure(String message) { super(message); }
    }

    static final class Input {
        String name;
        int[] shape;
        int size() { int n = 1; for (int d : shape) n *= d; return n; }
    }

    /** The manifest model.txt: one "key value ..." per line. */
    static final class Manifest {
        Path symbol, params, labels;
        List<Input> inputs = new ArrayList<>();
        int outputs = 1, resize = 0, crop = 0;
        float[] mean, std;

        Manifest(Path dir) throws Failure {
            for (String line : readText(dir.resolve("model.txt")).split("\n")) {
                String[] w = line.trim().split("\\s+");
                if (w[0].isEmpty() || w[0].startsWith("#")) continue;
                switch (w[0]) {
                    case "symbol": symbol = dir.resolve(w[1]); break;
                    case "params": params = dir.resolve(w[1]); break;
                    case "labels": labels = dir.resolve(w[1]); break;
                    case "outputs": outputs = Integer.parseInt(w[1]); break;
                    case "image": resize = Integer.parseInt(w[1]); crop = Integer.parseInt(w[2]); break;
                    case "mean": mean = floats(w); break;
                    case "std": std = floats(w); break;
                    case "input":
                        Input input = new Input();
                        input.name = w[1];
                        input.shape = new int[w.length - 2];
                        for (int i = 2; i < w.length; i++) input.shape[i - 2] = Integer.parseInt(w[i]);
                        inputs.add(input);
                        break;
                    default: break;
                }
            }
            if (inputs.isEmpty()) throw new Failure(dir.resolve("model.txt") + " names no input");
        }

        private static float[] floats(String[] words) {
            float[] values = new float[words.length - 1];
            for (int i = 1; i < words.length; i++) values[i - 1] = Float.parseFloat(words[i]);
            return values;
        }
    }

    static byte[] readBytes(Path path) throws Failure {
        try {
            return Files.readAllBytes(path);
        } catch (IOException e) {
            throw new Failure("cannot read " + path + ": " + e);
        }
    }

    static String readText(Path path) throws Failure {
        return new String(readBytes(path), StandardCharsets.UTF_8);
    }

    static String shapeText(int[] shape) {
        StringBuilder s = new StringBuilder("(");
        for (int i = 0; i < shape.length; i++) s.append(i > 0 ? ", " : "").append(shape[i]);
        return s.append(")").toString();
    }

    static float[] readF32(Path path, Input input) throws Failure {
        byte[] bytes = readBytes(path);
        if (bytes.length != input.size() * 4) {
            throw new Failure(path + " holds " + bytes.length + " bytes, but input '" + input.name + "' of shape "
                + shapeText(input.shape) + " takes " + input.size() + " float32 values (" + input.size() * 4
                + " bytes, little-endian)");
        }
        float[] data = new float[input.size()];
        ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(data);
        return data;
    }

    /** The image as HWC RGB bytes; gray images are repeated over the channels, as Pillow does. */
    static int[] decode(Path path, int[] size) throws Failure {
        BufferedImage image;
        try {
            image = ImageIO.read(path.toFile());
        } catch (IOException e) {
            throw new Failure("cannot decode image " + path + ": " + e.getMessage());
        }
        if (image == null) {
            throw new Failure("cannot decode image " + path + ": not a format ImageIO reads (JPEG, PNG, BMP, GIF); "
                + "or give a .f32 tensor");
        }
        int width = image.getWidth(), height = image.getHeight();
        int[] rgb = new int[height * width * 3];
        if (image.getType() == BufferedImage.TYPE_BYTE_GRAY) {  // getRGB would apply a gamma curve
            Raster raster = image.getRaster();
            for (int y = 0; y < height; y++)
                for (int x = 0; x < width; x++)
                    for (int c = 0; c < 3; c++) rgb[(y * width + x) * 3 + c] = raster.getSample(x, y, 0);
        } else {
            for (int y = 0; y < height; y++)
                for (int x = 0; x < width; x++) {
                    int p = image.getRGB(x, y);
                    rgb[(y * width + x) * 3] = (p >> 16) & 255;
                    rgb[(y * width + x) * 3 + 1] = (p >> 8) & 255;
                    rgb[(y * width + x) * 3 + 2] = p & 255;
                }
        }
        size[0] = height;
        size[1] = width;
        return rgb;
    }

    /** OpenCV's INTER_LINEAR arithmetic (11-bit fixed point), as MXNet's resize: equal to the bit. */
    static int[][] weights(int out, int in) {
        int[][] w = new int[4][out];  // first, second, weight0, weight1
        double scale = (double) in / out;
        for (int o = 0; o < out; o++) {
            float position = (float) ((o + 0.5) * scale - 0.5);
            float floor = (float) Math.floor(position);
            int index = (int) floor;
            float fraction = position - floor;
            if (index < 0 || index >= in - 1) fraction = 0f;
            index = Math.min(Math.max(index, 0), in - 1);
            w[0][o] = index;
            w[1][o] = Math.min(index + 1, in - 1);
            w[2][o] = (int) Math.rint((1f - fraction) * 2048f);
            w[3][o] = (int) Math.rint(fraction * 2048f);
        }
        return w;
    }

    static int[] resize(int[] rgb, int inH, int inW, int height, int width) {
        if (height == inH && width == inW) return rgb;
        int[][] wx = weights(width, inW), wy = weights(height, inH);
        int[] out = new int[height * width * 3];
        for (int y = 0; y < height; y++)
            for (int x = 0; x < width; x++)
                for (int c = 0; c < 3; c++) {
                    int r0 = rgb[(wy[0][y] * inW + wx[0][x]) * 3 + c] * wx[2][x] + rgb[(wy[0][y] * inW + wx[1][x]) * 3 + c] * wx[3][x];
                    int r1 = rgb[(wy[1][y] * inW + wx[0][x]) * 3 + c] * wx[2][x] + rgb[(wy[1][y] * inW + wx[1][x]) * 3 + c] * wx[3][x];
                    int value = (((wy[2][y] * (r0 >> 4)) >> 16) + ((wy[3][y] * (r1 >> 4)) >> 16) + 2) >> 2;
                    out[(y * width + x) * 3 + c] = Math.min(Math.max(value, 0), 255);
                }
        return out;
    }

    /** Shorter side to resize, centre crop, [0, 1], mean/std, HWC to CHW. */
    static float[] preprocess(Path path, Manifest m, Input input) throws Failure {
        if (m.crop == 0) {
            throw new Failure("model input '" + input.name + "' takes no images; give a .f32 tensor of shape "
                + shapeText(input.shape));
        }
        if (input.shape[0] != 1) throw new Failure("an image fills batch 1; input '" + input.name + "' has shape " + shapeText(input.shape));
        int[] size = new int[2];
        int[] rgb = decode(path, size);
        int inH = size[0], inW = size[1], height, width;
        if (inH <= inW) {
            height = m.resize;
            width = (int) ((long) inW * m.resize / inH);
        } else {
            height = (int) ((long) inH * m.resize / inW);
            width = m.resize;
        }
        int[] resized = resize(rgb, inH, inW, height, width);
        int top = (height - m.crop) / 2, left = (width - m.crop) / 2;
        if (top < 0 || left < 0) throw new Failure("the image is too small to crop " + m.crop + " pixels");
        float[] tensor = new float[3 * m.crop * m.crop];
        for (int c = 0; c < 3; c++)
            for (int y = 0; y < m.crop; y++)
                for (int x = 0; x < m.crop; x++) {
                    float value = resized[((top + y) * width + left + x) * 3 + c] / 255f;
                    if (m.mean != null) value = (value - m.mean[c]) / m.std[c];
                    tensor[(c * m.crop + y) * m.crop + x] = value;
                }
        return tensor;
    }

    static MXNet mx;

    static void check(int status, String call) throws Failure {
        if (status != 0) throw new Failure(call + " failed: " + mx.MXGetLastError());
    }

    static void number(StringBuilder out, double value) {
        out.append(Double.isFinite(value) ? Double.toString(value) : "null");
    }

    static int nested(StringBuilder out, float[] data, int[] shape, int axis, int at) {
        if (axis == shape.length) {
            out.append(Double.isFinite(data[at]) ? Float.toString(data[at]) : "null");
            return at + 1;
        }
        out.append('[');
        for (int i = 0; i < shape[axis]; i++) {
            if (i > 0) out.append(", ");
            at = nested(out, data, shape, axis + 1, at);
        }
        out.append(']');
        return at;
    }

    static void string(StringBuilder out, String text) {
        out.append('"').append(text.replace("\\", "\\\\").replace("\"", "\\\"")).append('"');
    }

    static float[] output(Pointer handle, int index, int[][] shapeOut) throws Failure {
        PointerByReference shapeRef = new PointerByReference();
        IntByReference ndim = new IntByReference();
        check(mx.MXPredGetOutputShape(handle, index, shapeRef, ndim), "MXPredGetOutputShape");
        int[] shape = shapeRef.getValue().getIntArray(0, ndim.getValue());
        int size = 1;
        for (int d : shape) size *= d;
        float[] values = new float[size];
        check(mx.MXPredGetOutput(handle, index, values, size), "MXPredGetOutput");
        shapeOut[0] = shape;
        return values;
    }

    static String run(String[] args) throws Failure {
        if (args.length < 2) throw new Failure("usage: Predict MODEL_DIR INPUT... [--dump-input FILE] [--repeat N]");
        Path dir = Paths.get(args[0]);
        String dump = null;
        int repeat = 0;
        List<String> files = new ArrayList<>();
        for (int i = 1; i < args.length; i++) {
            if ((args[i].equals("--dump-input") || args[i].equals("--repeat")) && i + 1 >= args.length) {
                throw new Failure(args[i] + " needs a value");
            }
            if (args[i].equals("--dump-input")) dump = args[++i];
            else if (args[i].equals("--repeat")) repeat = Integer.parseInt(args[++i]);
            else files.add(args[i]);
        }
        Manifest m = new Manifest(dir);
        if (files.size() != m.inputs.size()) {
            throw new Failure("the model takes " + m.inputs.size() + " input(s), one file each; got " + files.size());
        }
        // Every input is read and checked before the model is loaded: a bad file fails fast.
        List<float[]> data = new ArrayList<>();
        for (int i = 0; i < files.size(); i++) {
            Path path = Paths.get(files.get(i));
            data.add(files.get(i).endsWith(".f32") ? readF32(path, m.inputs.get(i)) : preprocess(path, m, m.inputs.get(i)));
        }
        if (dump != null) {
            ByteBuffer buffer = ByteBuffer.allocate(data.get(0).length * 4).order(ByteOrder.LITTLE_ENDIAN);
            buffer.asFloatBuffer().put(data.get(0));
            try {
                Files.write(Paths.get(dump), buffer.array());
            } catch (IOException e) {
                throw new Failure("cannot write " + dump + ": " + e);
            }
        }

        mx = Native.load(new File(System.getenv("MXNET_LIB_DIR"), "libmxnet.so").getPath(), MXNet.class);
        byte[] params = readBytes(m.params);
        String[] keys = new String[m.inputs.size()];
        int[] indptr = new int[keys.length + 1];
        List<Integer> shapes = new ArrayList<>();
        for (int i = 0; i < keys.length; i++) {
            keys[i] = m.inputs.get(i).name;
            for (int d : m.inputs.get(i).shape) shapes.add(d);
            indptr[i + 1] = shapes.size();
        }
        PointerByReference ref = new PointerByReference();
        check(mx.MXPredCreate(readText(m.symbol), params, params.length, 1, 0, keys.length, keys, indptr,
            shapes.stream().mapToInt(Integer::intValue).toArray(), ref), "MXPredCreate");
        Pointer handle = ref.getValue();
        for (int i = 0; i < keys.length; i++) check(mx.MXPredSetInput(handle, keys[i], data.get(i), data.get(i).length), "MXPredSetInput");
        check(mx.MXPredForward(handle), "MXPredForward");
        double[] times = new double[repeat];
        int[][] shape = new int[1][];
        for (int r = 0; r < repeat; r++) {
            long start = System.nanoTime();
            for (int i = 0; i < keys.length; i++) check(mx.MXPredSetInput(handle, keys[i], data.get(i), data.get(i).length), "MXPredSetInput");
            check(mx.MXPredForward(handle), "MXPredForward");
            for (int o = 0; o < m.outputs; o++) output(handle, o, shape);
            times[r] = (System.nanoTime() - start) / 1e6;
        }

        StringBuilder out = new StringBuilder("{\"outputs\": [");
        float[] first = null;
        for (int o = 0; o < m.outputs; o++) {
            float[] values = output(handle, o, shape);
            if (o > 0) out.append(", ");
            nested(out, values, shape[0], 0, 0);
            if (o == 0 && shape[0].length >= 1) first = Arrays.copyOf(values, values.length / shape[0][0]);
        }
        out.append("]");
        mx.MXPredFree(handle);

        if (m.labels != null && first != null && first.length > 0) {  // a classifier: softmax of the first row
            String[] labels = readText(m.labels).split("\n");
            double top = Double.NEGATIVE_INFINITY, total = 0;
            for (float v : first) top = Math.max(top, v);
            double[] probs = new double[first.length];
            for (int i = 0; i < first.length; i++) total += probs[i] = Math.exp(first[i] - top);
            Integer[] order = new Integer[first.length];
            for (int i = 0; i < order.length; i++) order[i] = i;
            Arrays.sort(order, (a, b) -> probs[a] != probs[b] ? Double.compare(probs[b], probs[a]) : Integer.compare(a, b));
            out.append(", \"top5\": [");
            for (int i = 0; i < Math.min(5, order.length); i++) {
                int c = order[i];
                out.append(i > 0 ? ", {\"label\": " : "{\"label\": ");
                string(out, c < labels.length ? labels[c] : "class " + c);
                out.append(", \"index\": ").append(c).append(", \"score\": ");
                number(out, probs[c] / total);
                out.append("}");
            }
            out.append("]");
        }
        if (repeat > 0) {
            Arrays.sort(times);
            out.append(", \"latency_ms\": {\"median\": ");
            number(out, times[repeat / 2]);
            out.append(", \"rounds\": ").append(repeat).append("}");
        }
        return out.append("}").toString();
    }

    public static void main(String[] args) {
        try {
            System.out.println(run(args));
        } catch (Failure | NumberFormatException e) {
            System.err.println("error: " + e.getMessage());
            System.exit(1);
        }
    }
}
