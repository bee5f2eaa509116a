;; Runs one exported gluon-hub model through MXNet's C predict API with JNA (written by gluon-hub deploy).
;;
;; Usage: clojure -cp jna.jar predict.clj MODEL_DIR INPUT... [--dump-input FILE] [--repeat N]
;; Each INPUT is a raw little-endian float32 tensor (.f32) of one model input, or, for a
;; model that takes images, a JPEG/PNG/BMP/GIF image (decoded by ImageIO) preprocessed as
;; the model's spec says. Prints {"outputs": [...], "top5": [...]} as one JSON line.
(ns predict
  (:require [clojure.string :as str])
  (:import [com.sun.jna Function NativeLibrary Pointer]
           [com.sun.jna.ptr IntByReference PointerByReference]
           [java.awt.image BufferedImage]
           [java.io File]
           [java.nio ByteBuffer ByteOrder]
           [java.nio.file Files Path Paths]
           [javax.imageio ImageIO]))

(set! *warn-on-reflection* true)

(defn- fail [message] (throw (ex-info message {:user true})))

(defn- path ^Path [^String text] (Paths/get text (make-array String 0)))

(defn- read-bytes ^bytes [^Path p]
  (try (Files/readAllBytes p)
       (catch java.io.IOException e (fail (str "cannot read " p ": " e)))))

(defn- read-text [^Path p] (String. (read-bytes p) "UTF-8"))

(defn- shape-text [shape] (str "(" (str/join ", " shape) ")"))

(defn- read-manifest
  "The manifest model.txt: one \"key value ...\" per line."
  [^Path dir]
  (let [m (reduce (fn [m line]
                    (let [[k & vs] (str/split (str/trim line) #"\s+")]
                      (case k
                        "symbol" (assoc m :symbol (.resolve dir ^String (first vs)))
                        "params" (assoc m :params (.resolve dir ^String (first vs)))
                        "labels" (assoc m :labels (.resolve dir ^String (first vs)))
                        "outputs" (assoc m :outputs (Integer/parseInt (first vs)))
                        "image" (assoc m :resize (Integer/parseInt (first vs)) :crop (Integer/parseInt (second vs)))
                        "mean" (assoc m :mean (float-array (map #(Float/parseFloat %) vs)))
                        "std" (assoc m :std (float-array (map #(Float/parseFloat %) vs)))
                        "input" (update m :inputs conj {:name (first vs) :shape (mapv #(Integer/parseInt %) (rest vs))})
                        m)))
                  {:inputs [] :outputs 1 :crop 0 :resize 0}
                  (str/split-lines (read-text (.resolve dir "model.txt"))))]
    (when (empty? (:inputs m)) (fail (str (.resolve dir "model.txt") " names no input")))
    m))

(defn- size-of [shape] (reduce * 1 shape))

(defn- read-f32 ^floats [^Path p {:keys [name shape]}]
  (let [b (read-bytes p) n (size-of shape) data (float-array n)]
    (when (not= (alength b) (* 4 n))
      (fail (str p " holds " (alength b) " bytes, but input '" name "' of shape " (shape-text shape)
                 " takes " n " float32 values (" (* 4 n) " bytes, little-endian)")))
    (.get (.asFloatBuffer (.order (ByteBuffer/wrap b) ByteOrder/LITTLE_ENDIAN)) data)
    data))

(defn- decode
  "The image as [height width HWC-RGB-ints]; gray images repeated over the channels, as Pillow does."
  [^Path p]
  (let [^BufferedImage image (try (ImageIO/read (.toFile p))
                                  (catch java.io.IOException e (fail (str "cannot decode image " p ": " (.getMessage e)))))]
    (when-not image
      (fail (str "cannot decode image " p ": not a format ImageIO reads (JPEG, PNG, BMP, GIF); or give a .f32 tensor")))
    (let [w (.getWidth image) h (.getHeight image) rgb (int-array (* h w 3))
          gray (= (.getType image) BufferedImage/TYPE_BYTE_GRAY) raster (.getRaster image)]
      (dotimes [y h]
        (dotimes [x w]
          (let [i (* 3 (+ (* y w) x))]
            (if gray  ; getRGB would apply a gamma curve to gray images
              (let [v (.getSample raster (int x) (int y) (int 0))]
                (aset rgb i v) (aset rgb (+ i 1) v) (aset rgb (+ i 2) v))
              (let [px (.getRGB image (int x) (int y))]
                (aset rgb i (bit-and (bit-shift-right px 16) 255))
                (aset rgb (+ i 1) (bit-and (bit-shift-right px 8) 255))
                (aset rgb (+ i 2) (bit-and px 255)))))))
      [h w rgb])))

(defn- weights
  "OpenCV's INTER_LINEAR arithmetic (11-bit fixed point), as MXNet's resize: equal to the bit."
  [out in]
  (let [out (int out) in (int in) scale (/ (double in) (double out))
        first-i (int-array out) second-i (int-array out) w0 (int-array out) w1 (int-array out)]
    (dotimes [o out]
      (let [position (float (- (* (+ o 0.5) scale) 0.5))
            fl (float (Math/floor position))
            index (int fl)
            fraction (if (or (< index 0) (>= index (dec in))) (float 0) (float (- position fl)))
            index (int (min (max index 0) (dec in)))]
        (aset first-i o index)
        (aset second-i o (int (min (inc index) (dec in))))
        (aset w0 o (int (Math/rint (* (float (- (float 1) fraction)) (float 2048)))))
        (aset w1 o (int (Math/rint (* fraction (float 2048)))))))
    [first-i second-i w0 w1]))

(defn- resize-image ^ints [^ints rgb in-h in-w height width]
  (if (and (= height in-h) (= width in-w))
    rgb
    (let [[^ints x0 ^ints x1 ^ints a0 ^ints a1] (weights width in-w)
          [^ints y0 ^ints y1 ^ints b0 ^ints b1] (weights height in-h)
          in-w (int in-w) width (int width) out (int-array (* height width 3))]
      (dotimes [y height]
        (dotimes [x width]
          (dotimes [c 3]
            (let [px (fn ^long [^long yy ^long xx] (aget rgb (+ (* 3 (+ (* yy in-w) xx)) c)))
                  r0 (+ (* (px (aget y0 y) (aget x0 x)) (aget a0 x)) (* (px (aget y0 y) (aget x1 x)) (aget a1 x)))
                  r1 (+ (* (px (aget y1 y) (aget x0 x)) (aget a0 x)) (* (px (aget y1 y) (aget x1 x)) (aget a1 x)))
                  v (bit-shift-right (+ (bit-shift-right (* (aget b0 y) (bit-shift-right r0 4)) 16)
                                        (bit-shift-right (* (aget b1 y) (bit-shift-right r1 4)) 16) 2) 2)]
              (aset out (+ (* 3 (+ (* y width) x)) c) (int (min (max v 0) 255)))))))
      out)))

(defn- preprocess
  "Shorter side to resize, centre crop, [0, 1], mean/std, HWC to CHW."
  ^floats [^Path p {:keys [crop resize mean std]} {:keys [name shape]}]
  (when (zero? crop) (fail (str "model input '" name "' takes no images; give a .f32 tensor of shape " (shape-text shape))))
  (when (not= 1 (first shape)) (fail (str "an image fills batch 1; input '" name "' has shape " (shape-text shape))))
  (let [[in-h in-w rgb] (decode p)
        [height width] (if (<= in-h in-w) [resize (quot (* in-w resize) in-h)] [(quot (* in-h resize) in-w) resize])
        ^ints resized (resize-image rgb in-h in-w height width)
        top (quot (- height crop) 2) left (quot (- width crop) 2)
        crop (int crop) width (int width)
        ^floats mean mean ^floats std std
        tensor (float-array (* 3 crop crop))]
    (when (or (neg? top) (neg? left)) (fail (str "the image is too small to crop " crop " pixels")))
    (dotimes [c 3]
      (dotimes [y crop]
        (dotimes [x crop]
          (let [v (float (/ (float (aget resized (+ (* 3 (+ (* (+ top y) width) left x)) c))) (float 255)))
                v (if mean (float (/ (float (- v (aget mean c))) (aget std c))) v)]
            (aset tensor (+ (* (+ (* c crop) y) crop) x) v)))))
    tensor))

(def ^:private ^NativeLibrary lib
  (delay (NativeLibrary/getInstance (.getPath (File. (System/getenv "MXNET_LIB_DIR") "libmxnet.so")))))

(defn- call [^String fname & args]
  (.invokeInt (.getFunction ^NativeLibrary @lib fname) (object-array args)))

(defn- check [status fname]
  (when-not (zero? status)
    (fail (str fname " failed: " (.invokeString (.getFunction ^NativeLibrary @lib "MXGetLastError") (object-array []) false)))))

(defn- output [handle o]
  (let [shape-ref (PointerByReference.) ndim (IntByReference.)]
    (check (call "MXPredGetOutputShape" handle (int o) shape-ref ndim) "MXPredGetOutputShape")
    (let [shape (vec (.getIntArray (.getValue shape-ref) 0 (.getValue ndim)))
          values (float-array (size-of shape))]
      (check (call "MXPredGetOutput" handle (int o) values (int (alength values))) "MXPredGetOutput")
      [shape values])))

(defn- number [^double v] (if (Double/isFinite v) (str v) "null"))

(defn- nested [^floats values shape]
  (if (empty? shape)
    (number (aget values 0))
    (let [step (size-of (rest shape))]
      (str "[" (str/join ", " (for [i (range (first shape))]
                               (nested (java.util.Arrays/copyOfRange values (int (* i step)) (int (* (inc i) step)))
                                       (rest shape))))
           "]"))))

(defn- json-string [^String s] (str "\"" (-> s (str/replace "\\" "\\\\") (str/replace "\"" "\\\"")) "\""))

(defn- run [args]
  (when (< (count args) 2) (fail "usage: predict.clj MODEL_DIR INPUT... [--dump-input FILE] [--repeat N]"))
  (let [dir (path (first args))
        opts (loop [[a & more] (rest args) opts {:files []}]
               (cond
                 (nil? a) opts
                 (#{"--dump-input" "--repeat"} a) (do (when-not more (fail (str a " needs a value")))
                                                      (recur (rest more) (assoc opts (keyword (subs a 2)) (first more))))
                 :else (recur more (update opts :files conj a))))
        m (read-manifest dir)
        inputs (:inputs m)
        files (:files opts)
        repeat-n (Integer/parseInt (or (:repeat opts) "0"))]
    (when (not= (count files) (count inputs))
      (fail (str "the model takes " (count inputs) " input(s), one file each; got " (count files))))
    ;; Every input is read and checked before the model is loaded: a bad file fails fast.
    (let [data (mapv (fn [^String f input] (if (str/ends-with? f ".f32") (read-f32 (path f) input) (preprocess (path f) m input)))
                     files inputs)]
      (when-let [dump (:dump-input opts)]
        (let [^floats d (first data) buf (.order (ByteBuffer/allocate (* 4 (alength d))) ByteOrder/LITTLE_ENDIAN)]
          (.put (.asFloatBuffer buf) d)
          (with-open [o (java.io.FileOutputStream. ^String dump)] (.write o (.array buf)))))
      (let [params (read-bytes (:params m))
            keys (into-array String (map :name inputs))
            shapes (int-array (mapcat :shape inputs))
            indptr (int-array (reductions + 0 (map (comp count :shape) inputs)))
            ref (PointerByReference.)]
        (check (call "MXPredCreate" (read-text (:symbol m)) params (int (alength params)) (int 1) (int 0)
                     (int (count inputs)) keys indptr shapes ref) "MXPredCreate")
        (let [handle (.getValue ref)
              forward (fn []
                        (doseq [[k ^floats d] (map vector keys data)]
                          (check (call "MXPredSetInput" handle k d (int (alength d))) "MXPredSetInput"))
                        (check (call "MXPredForward" handle) "MXPredForward"))
              _ (forward)
              times (sort (for [_ (range repeat-n)]
                            (let [start (System/nanoTime)]
                              (forward)
                              (dotimes [o (:outputs m)] (output handle o))
                              (/ (- (System/nanoTime) start) 1e6))))
              outs (mapv #(output handle %) (range (:outputs m)))
              _ (call "MXPredFree" handle)
              [shape0 ^floats values0] (first outs)
              row (when (seq shape0) (java.util.Arrays/copyOf values0 (int (quot (alength values0) (first shape0)))))
              top5 (when (and (:labels m) row (pos? (alength ^floats row)))
                     (let [labels (str/split-lines (read-text (:labels m)))
                           top (apply max (map double row))
                           exps (mapv #(Math/exp (- (double %) top)) row)
                           total (reduce + exps)]
                       (for [c (take 5 (sort-by (fn [i] [(- (double (exps i))) i]) (range (count exps))))]
                         (str "{\"label\": " (json-string (get labels c (str "class " c)))
                              ", \"index\": " c ", \"score\": " (number (/ (double (exps c)) total)) "}"))))]
          (str "{\"outputs\": [" (str/join ", " (for [[shape values] outs] (nested values shape))) "]"
               (when top5 (str ", \"top5\": [" (str/join ", " top5) "]"))
               (when (pos? repeat-n)
                 (str ", \"latency_ms\": {\"median\": " (number (nth times (quot repeat-n 2))) ", \"rounds\": " repeat-n "}"))
               "}"))))))

(try
  (println (run *command-line-args*))
  (catch clojure.lang.ExceptionInfo e
    (binding [*out* *err*] (println (str "error: " (.getMessage e))))
    (System/exit 1))
  (catch NumberFormatException e
    (binding [*out* *err*] (println (str "error: " (.getMessage e))))
    (System/exit 1)))
