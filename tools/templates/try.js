// "Try your classifier" (try.html): notebook 12's TFLite file run by LiteRT.js, the LiteRT
// runtime compiled to WebAssembly (XNNPACK on the CPU), from this site's own folder: the picture
// is read, resized and classified in this browser and never leaves the device.
// tools/build_site.py copies this file into the site's _try/ with LiteRT.js (npm, pinned).
import {Tensor, loadAndCompile, loadLiteRt} from "./litert/index.js";

const $ = (id) => document.getElementById(id);
// What the page did last, for tests/test_try_page.py: state "loading", "ready", "busy", "done"
// or "error"; the model's input of the last picture and its probabilities in class order.
const page = (window.tryPage = {state: "loading", last: null, lastInput: null});

function say(text, problem = false) {
  $("status").textContent = text;
  $("status").classList.toggle("problem", problem);
  document.body.dataset.state = page.state;
}

// tf.round: halves to the even neighbour (2.5 -> 2), not up as Math.round does.
function roundHalfEven(v) {
  const r = Math.round(v);
  return r - v === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

// data.image_pipeline's resize: tf.image.resize(bilinear, antialias=False), TensorFlow's
// ResizeBilinear with half-pixel centres, computed in float32 as its CPU kernel does, then
// rounded to whole 0..255 values (the pipeline's uint8 cache). `rgba` is the upright picture's
// pixels (canvas order, width x height); returns height x width x 3 RGB float32 numbers.
function resizeBilinear(rgba, width, height, outHeight, outWidth) {
  const f = Math.fround;
  const weights = (inSize, outSize) => {
    const scale = f(inSize / outSize);
    const lower = new Int32Array(outSize), upper = new Int32Array(outSize);
    const lerp = new Float32Array(outSize);
    for (let i = 0; i < outSize; i++) {
      const at = f(f(f(i + 0.5) * scale) - 0.5);
      const floor = Math.floor(at);
      lower[i] = Math.max(floor, 0);
      upper[i] = Math.min(Math.ceil(at), inSize - 1);
      lerp[i] = f(at - floor);
    }
    return {lower, upper, lerp};
  };
  const ys = weights(height, outHeight), xs = weights(width, outWidth);
  const out = new Float32Array(outHeight * outWidth * 3);
  for (let y = 0; y < outHeight; y++) {
    const top = ys.lower[y] * width, bottom = ys.upper[y] * width, dy = ys.lerp[y];
    for (let x = 0; x < outWidth; x++) {
      const left = xs.lower[x], right = xs.upper[x], dx = xs.lerp[x];
      for (let c = 0; c < 3; c++) {
        const tl = rgba[4 * (top + left) + c], tr = rgba[4 * (top + right) + c];
        const bl = rgba[4 * (bottom + left) + c], br = rgba[4 * (bottom + right) + c];
        const upperRow = f(tl + f(f(tr - tl) * dx));
        const lowerRow = f(bl + f(f(br - bl) * dx));
        const value = f(upperRow + f(f(lowerRow - upperRow) * dy));
        out[3 * (y * outWidth + x) + c] = Math.min(255, Math.max(0, roundHalfEven(value)));
      }
    }
  }
  return out;
}

let model, classes, inputShape;

async function run(pixels) {
  const tensor = new Tensor(pixels, inputShape);
  try {
    const outputs = await model.run(tensor);
    const probabilities = Float32Array.from(await outputs[0].data());
    outputs.forEach((t) => t.delete());
    return probabilities;
  } finally {
    tensor.delete();
  }
}

async function start() {
  say("Loading LiteRT.js and the model…");
  await loadLiteRt(new URL("litert/", import.meta.url).href);
  const [names, bytes] = await Promise.all([
    fetch(new URL("class_names.json", import.meta.url)).then((r) => r.json()),
    fetch(new URL("model.tflite", import.meta.url)).then((r) => r.arrayBuffer())]);
  classes = names;
  model = await loadAndCompile(new Uint8Array(bytes), {accelerator: "wasm"});
  // [batch, height, width, 3]; the batch is -1 (any) in a file exported as notebook 12 does
  inputShape = Array.from(model.getInputDetails()[0].shape, (n, i) => (i === 0 ? 1 : n));
  const outputs = model.getOutputDetails()[0].shape;
  if (outputs[outputs.length - 1] !== classes.length) {
    throw new Error(`the model gives ${outputs[outputs.length - 1]} outputs and ` +
                    `class_names.json names ${classes.length} classes: run notebook 12 again`);
  }
  await run(new Float32Array(inputShape.reduce((a, b) => a * b, 1)));  // a first run sets up
  page.state = "ready";
  say(`Ready: ${classes.length} classes (${classes.join(", ")}), pictures resized to ` +
      `${inputShape[2]} × ${inputShape[1]} pixels.`);
}

function show(probabilities, ms, runs) {
  const order = Array.from(probabilities.keys()).sort((a, b) => probabilities[b] - probabilities[a]);
  $("answers").replaceChildren(...order.map((i, rank) => {
    const row = document.createElement("div");
    row.className = rank === 0 ? "row best" : "row";
    const label = document.createElement("div");
    label.className = "label";
    const name = document.createElement("span"), value = document.createElement("span");
    name.textContent = classes[i];
    value.textContent = `${(100 * probabilities[i]).toFixed(1)} %`;
    label.append(name, value);
    const track = document.createElement("div"), bar = document.createElement("div");
    track.className = "track";
    bar.className = "bar";
    bar.style.width = `${(100 * probabilities[i]).toFixed(2)}%`;
    track.append(bar);
    row.append(label, track);
    return row;
  }));
  $("timing").textContent = `The model took ${ms.toFixed(1)} ms on this device ` +
      `(median of ${runs} runs, LiteRT.js on the CPU through WebAssembly).`;
}

async function classify(file) {
  if (page.state === "loading" || page.state === "busy") return;
  page.state = "busy";
  say(`Reading ${file.name}…`);
  // Upright as its EXIF orientation says; colours as stored (no colour profile applied), as
  // TensorFlow's decoder gives them.
  const bitmap = await createImageBitmap(file, {imageOrientation: "from-image",
                                                colorSpaceConversion: "none"});
  const canvas = $("picture");
  canvas.width = bitmap.width;
  canvas.height = bitmap.height;
  const context = canvas.getContext("2d", {willReadFrequently: true});
  context.fillStyle = "#fff";  // transparent parts on white, as the pipeline reads them
  context.fillRect(0, 0, bitmap.width, bitmap.height);
  context.drawImage(bitmap, 0, 0);  // one to one: the browser scales nothing
  bitmap.close();
  const rgba = context.getImageData(0, 0, canvas.width, canvas.height).data;
  const pixels = resizeBilinear(rgba, canvas.width, canvas.height, inputShape[1], inputShape[2]);
  const times = [];
  let probabilities;
  for (let i = 0; i < 5; i++) {
    const begin = performance.now();
    probabilities = await run(pixels);
    times.push(performance.now() - begin);
  }
  const ms = times.sort((a, b) => a - b)[2];
  show(probabilities, ms, times.length);
  const best = probabilities.indexOf(Math.max(...probabilities));
  page.lastInput = pixels;
  page.last = {name: file.name, label: best, className: classes[best], ms,
               probabilities: Array.from(probabilities), width: canvas.width,
               height: canvas.height};
  page.state = "done";
  say(`${file.name}: ${classes[best]}.`);
}

function failed(error) {
  page.state = "error";
  say(`Something went wrong: ${error.message || error}`, true);
  console.error(error);
}

$("file").addEventListener("change", (event) => {
  const file = event.target.files[0];
  if (file) classify(file).catch(failed);
});
const drop = $("drop");
for (const name of ["dragenter", "dragover"]) {
  drop.addEventListener(name, (event) => { event.preventDefault(); drop.classList.add("over"); });
}
drop.addEventListener("dragleave", () => drop.classList.remove("over"));
drop.addEventListener("drop", (event) => {
  event.preventDefault();
  drop.classList.remove("over");
  const file = event.dataTransfer.files[0];
  if (file) classify(file).catch(failed);
});
if (location.protocol === "file:") {
  page.state = "error";
  say("Browsers load WebAssembly only over http: run `make serve` and open the address it " +
      "prints.", true);
} else {
  start().catch(failed);
}
