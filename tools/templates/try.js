// "Try your classifier" (try.html): notebook 12's TFLite file run by LiteRT.js, the LiteRT
// runtime compiled to WebAssembly (XNNPACK on the CPU), from this site's own folder: the picture
// is read, resized and classified in this browser and never leaves the device.
// tools/build_site.py copies this file into the site's _try/ with LiteRT.js (npm, pinned).
import {Tensor, loadAndCompile, loadLiteRt} from "./litert/index.js";

const $ = (id) => document.getElementById(id);
// What the page did last, for tests/test_try_page.py: state "loading", "ready", "busy", "done"
// or "error"; the model's input of the last picture and its probabilities in class order, or
// for a picture it refused {name, problem}.
const page = (window.tryPage = {state: "loading", last: null, lastInput: null});
// The course's limit (helpers/decoding.py's MAX_PIXELS, which tests/test_try_page.py checks):
// a larger picture is shrunk while it is decoded, by 2, 4, 8… each way, the scales at which the
// course's pipeline decodes a large JPEG, to the first that fits. The browser could not draw a
// 300-megapixel picture at all (Chromium's canvas holds at most 2^28 pixels, 65,535 a side;
// phones less), and a phone could run out of memory decoding one whole.
const MAX_PIXELS = 40_000_000;

// A picture the page will not classify, with the reason in plain words.
class Refusal extends Error {}

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

let model, classes, inputShape, band = null;

// band.json (optional, beside the model): {"answer_above": p}, 0 <= p <= 1. The page names the
// most probable class only when its probability is above p, and says "not sure" at p or below:
// notebook 06's "not sure" band, which for two classes and the band (1 - p, p) on p(dog) says
// the same, for any number of classes.
function checkBand(json) {
  const p = json && json.answer_above;
  if (typeof p !== "number" || !(p >= 0 && p <= 1)) {
    throw new Error(`band.json must be {"answer_above": p} with 0 <= p <= 1, got ` +
                    `${JSON.stringify(json)}: run notebook 12 again`);
  }
  return {answer_above: p};
}

const percent = (p) => `${(100 * p).toFixed(1)} %`;

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
  // try.html names _try/band.json where tools/build_site.py copied one: asked for only then, so
  // a site without it loads nothing that is not there
  const [names, bytes, bandJson] = await Promise.all([
    fetch(new URL("class_names.json", import.meta.url)).then((r) => r.json()),
    fetch(new URL("model.tflite", import.meta.url)).then((r) => r.arrayBuffer()),
    $("band") ? fetch(new URL("band.json", import.meta.url)).then((r) => r.json()) : null]);
  classes = names;
  if (bandJson !== null) band = checkBand(bandJson);
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
      `${inputShape[2]} × ${inputShape[1]} pixels.` + (band ? ` It names a class only when ` +
      `its probability is above ${percent(band.answer_above)}, else says "not sure".` : ""));
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
    value.textContent = percent(probabilities[i]);
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

// A new, empty picture: a canvas the browser could not allocate loses its context for good
// (Chromium reads zeros from it ever after, even made small), so each picture gets its own.
function freshCanvas(width, height) {
  const canvas = document.createElement("canvas");
  canvas.id = "picture";
  canvas.width = width;
  canvas.height = height;
  $("picture").replaceWith(canvas);
  return canvas;
}

// The last picture's answer off the page, so nothing left on screen looks like the next one's.
function clear() {
  freshCanvas(0, 0);
  $("answers").replaceChildren();
  $("timing").textContent = "";
  page.last = page.lastInput = null;
}

// The upright picture's width and height from its header, before it is decoded (an <img>
// decodes only when painted): undefined if the browser cannot read the file as a picture.
async function uprightSize(file) {
  const url = URL.createObjectURL(file);
  const image = new Image();
  try {
    await new Promise((resolve, reject) => {
      image.onload = resolve;
      image.onerror = reject;
      image.src = url;
    });
    return [image.naturalWidth, image.naturalHeight];
  } catch {
    return undefined;
  } finally {
    URL.revokeObjectURL(url);
  }
}

const unreadable = (name) => new Refusal(
    `${name} could not be read as a picture: this browser cannot decode it. Nothing was ` +
    "classified; choose a photo or a picture file (JPEG, PNG, WebP…).");

// The picture upright as its EXIF orientation says, colours as stored (no colour profile
// applied), as TensorFlow's decoder gives them; shrunk while decoding when it has more pixels
// than the limit. Returns {bitmap, width, height, scale}: the size before shrinking by 1/scale.
async function decode(file) {
  const size = await uprightSize(file);
  if (!size || !(size[0] > 0 && size[1] > 0)) throw unreadable(file.name);
  const [width, height] = size;
  let scale = 1;
  while (Math.ceil(width / scale) * Math.ceil(height / scale) > MAX_PIXELS) scale *= 2;
  const options = {imageOrientation: "from-image", colorSpaceConversion: "none"};
  if (scale > 1) {  // as a JPEG decoder's 1/scale: whole output pixels, a box-like average
    Object.assign(options, {resizeWidth: Math.ceil(width / scale),
                            resizeHeight: Math.ceil(height / scale), resizeQuality: "medium"});
  }
  try {
    return {bitmap: await createImageBitmap(file, options), width, height, scale};
  } catch (error) {
    console.warn(error);
    throw new Refusal(`This browser could not decode ${file.name} (${width} × ${height} ` +
                      "pixels) at that size. Nothing was classified; try a smaller copy of it.");
  }
}

async function classify(file) {
  if (!model || page.state === "loading" || page.state === "busy") return;
  page.state = "busy";
  clear();
  say(`Reading ${file.name}…`);
  try {
    await answer(file);
  } catch (error) {
    clear();
    const problem = error instanceof Refusal ? error.message :
        `Something went wrong with ${file.name}: ${error.message || error}`;
    if (!(error instanceof Refusal)) console.error(error);
    page.last = {name: file.name, problem};
    page.state = "error";
    say(problem, true);
  }
}

async function answer(file) {
  const {bitmap, width, height, scale} = await decode(file);
  const canvas = freshCanvas(bitmap.width, bitmap.height);
  const context = canvas.getContext("2d", {willReadFrequently: true});
  let rgba;
  if (context) {  // null where the browser refuses a canvas this large (Safari)
    context.fillStyle = "#fff";  // transparent parts on white, as the pipeline reads them
    context.fillRect(0, 0, bitmap.width, bitmap.height);
    context.drawImage(bitmap, 0, 0);  // one to one: the browser scales nothing here
    rgba = context.getImageData(0, 0, canvas.width, canvas.height).data;
  }
  bitmap.close();
  // Drawn on opaque white, a picture has no transparent black pixel: all zeros (transparent
  // black) means the browser could not draw a canvas this large and gave nothing.
  if (!rgba || !new Uint32Array(rgba.buffer, rgba.byteOffset, rgba.length / 4).some((v) => v)) {
    throw new Refusal(`This browser could not draw ${file.name} (${canvas.width} × ` +
                      `${canvas.height} pixels): it read back empty. Nothing was classified; ` +
                      "try a smaller copy of it.");
  }
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
  const sure = !band || probabilities[best] > band.answer_above;
  const shrunk = scale > 1;
  page.lastInput = pixels;
  page.last = {name: file.name, label: best, className: classes[best], ms,
               verdict: sure ? classes[best] : "not sure",
               probabilities: Array.from(probabilities), width: canvas.width,
               height: canvas.height, original: {width, height}, shrunk};
  page.state = "done";
  say(`${file.name}: ` + (sure ? `${classes[best]}.` : `not sure (${classes[best]} is the ` +
      `likeliest at ${percent(probabilities[best])}, not above ${percent(band.answer_above)}).`) +
      (shrunk ? ` The picture has ${width} × ${height} pixels, more than the ` +
       `${MAX_PIXELS / 1e6} million the course decodes: it was shrunk to ${canvas.width} × ` +
       `${canvas.height} while decoding.` : ""));
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
