// springsim's offline player: stands in for the widget's model in a standalone HTML
// file (springsim.viewer.standalone), feeding viewer.js the recorded frames on a timer.
// Play, pause, step and reset act on the recording; grabbing and pins need the live
// simulation, so they do nothing here.
function springsimPlay(viewer, el, data) {
  const bytes = (b64) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)).buffer;
  const scene = data.scene, size = scene.nodes * scene.dim;
  const frames = new Float32Array(bytes(data.frames));
  const values = data.values ? new Float32Array(bytes(data.values)) : null, m = scene.springs;
  const count = data.times.length, listeners = [];
  const pinned = new DataView(bytes(data.pinned));
  let k = 0, playing = true;
  const emit = (content, buffers) => listeners.forEach((cb) => cb(content, buffers || []));
  const state = () => emit({ type: "state", playing, dt: null, substeps: null, color_by: data.color_by || null,
                             sliders: [], error: null, offline: true });
  const frame = () => {
    const pos = frames.subarray(k * size, (k + 1) * size);
    const buffers = [new DataView(pos.buffer, pos.byteOffset, pos.byteLength), pinned];
    if (values) {
      const v = values.subarray(k * m, (k + 1) * m);
      buffers.push(new DataView(v.buffer, v.byteOffset, v.byteLength));
    }
    emit({ type: "frame", frame: k + 1, time: data.times[k], energy: data.energies[k],
           color_by: data.color_by || null, range: values ? data.ranges[k] : null }, buffers);
  };
  const model = {
    get: () => undefined, set: () => {}, save_changes: () => {}, off: () => {},
    on: (name, cb) => { if (name === "msg:custom") listeners.push(cb); },
    send: (msg) => {
      if (msg.type === "hello") {
        const buffers = [data.springs, data.faces, data.triangles, data.radii];
        emit(scene, buffers.filter((b) => b !== null).map((b) => new DataView(bytes(b))));
        state();
        frame();
      } else if (msg.type === "play" || msg.type === "pause") {
        playing = msg.type === "play";
        state();
      } else if (msg.type === "step") {
        k = (k + 1) % count;
        frame();
      } else if (msg.type === "reset") {
        k = 0;
        frame();
      }
    },
  };
  viewer.render({ model, el });
  setInterval(() => {
    if (!playing) return;
    k = (k + 1) % count;
    frame();
  }, 1000 * data.period);
}
