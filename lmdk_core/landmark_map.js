// The landmark map's front end: one Leaflet map where a click adds a landmark place and a click on
// a place selects it. Shared by the Jupyter explorer (lmdk_core/jupyter/map_widget.py, anywidget)
// and the dashboard (dashboard/map_element.py, a Streamlit component in the page itself); each
// host supplies `L` (the Leaflet of the installed xstatic-leaflet package: no CDN) and a `model`
// with get(key), on/off("change:key", fn) and send(message), and adds its own `export default`.
// No tile is requested unless `tiles` is set.
//
// Model keys (lmdk_core.map_view.map_view builds them): track (the line), track_points,
//   landmark_points, dummy_points, released ([[lat, lon], ...]), places ([{name, lat, lon,
//   radius_m}]), selected, tiles, attribution, context (a GeoJSON FeatureCollection or null:
//   offline bearings), colours ({track, landmark, dummy, released, place, selected, context}),
//   height (CSS).
// Messages sent: {event: "map_click", lat, lon} for a click on the map background (or on
//   anything drawn but a place: only place circles take clicks); {event: "place_click", name,
//   lat, lon} for a click on a place circle (its click does not also reach the map).

const LABEL_STYLE =
  "font:11px sans-serif;color:#555;white-space:nowrap;text-shadow:0 0 2px #fff,0 0 2px #fff;" +
  "display:inline-block";

function textElement(tag, text, style) {
  const e = document.createElement(tag);
  e.textContent = text;  // names are data (a places file may come from anyone): never HTML
  if (style) e.style.cssText = style;
  return e;
}

function render({ model, el }) {
  // the palette's colours (map_view.COLOURS): both hosts always send them
  const colour = (k) => model.get("colours")[k];
  const box = document.createElement("div");
  box.className = "lmdk-map";
  box.style.height = model.get("height") || "400px";
  box.style.width = "100%";
  // Keyboard: the map is one tab stop with a name; arrows pan, + and - zoom, Enter adds a place
  // at the centre (marked by the cross). Leaflet's own keyboard handler stays off: its
  // focus-on-press scrolled a partly hidden map under the cursor.
  box.tabIndex = 0;
  box.setAttribute("role", "application");
  box.setAttribute("aria-roledescription", "map");
  box.setAttribute("aria-label",
    "Map of your trace. Arrow keys pan, plus and minus zoom, Enter adds a place at the centre.");
  el.appendChild(box);

  // The wheel zooms only once the map has focus (a click or Tab), so scrolling the page over
  // it scrolls the page; one notch is one zoom level.
  const map = L.map(box, { doubleClickZoom: false, keyboard: false, zoomControl: true,
                           attributionControl: true, scrollWheelZoom: false,
                           wheelPxPerZoomLevel: 120 });
  map.setView([0, 0], 2);
  box.lmdkMap = map; // for scripted use (browser tests): el.lmdkMap.latLngToContainerPoint(...)
  L.control.scale().addTo(map);

  let tileLayer = null;
  // at most one callback a frame, after layout, whichever labels changed size; hiding a label
  // keeps its size, so declutter does not call itself again
  const labelSizes = new ResizeObserver(() => declutter());
  const context = L.layerGroup().addTo(map);
  const track = L.layerGroup().addTo(map);
  const landmarks = L.layerGroup().addTo(map);
  const dummies = L.layerGroup().addTo(map);
  const released = L.layerGroup().addTo(map);
  const places = L.layerGroup().addTo(map);
  let fitted = false;

  function drawTiles() {
    if (tileLayer) { map.removeLayer(tileLayer); tileLayer = null; }
    const url = model.get("tiles");
    if (url) {
      tileLayer = L.tileLayer(url, { attribution: model.get("attribution"), maxZoom: 19 });
      tileLayer.addTo(map);
      tileLayer.bringToBack();
    }
  }

  function fit() {
    const pts = model.get("track") || [];
    if (!pts.length || box.clientHeight === 0 || box.clientWidth === 0) return;
    map.fitBounds(L.latLngBounds(pts), { padding: [10, 10] });
    fitted = true;
  }

  function dots(group, points, style) {
    for (const p of points || []) {
      L.circleMarker(p, { ...style, interactive: false }).addTo(group);
    }
  }

  function drawTrack() {
    track.clearLayers();
    const pts = model.get("track") || [];
    if (pts.length > 1) {
      L.polyline(pts, { color: colour("track"), weight: 2, opacity: 0.7, interactive: false })
        .addTo(track);
    }
    dots(track, model.get("track_points"),
      { radius: 2, color: colour("track"), weight: 1, fill: true, fillOpacity: 0.8 });
    fitted = false;
    fit();
  }

  let labelled = [];  // [{marker, label, point}] of the context layer's names
  function drawContext() {
    context.clearLayers();
    labelled = [];
    labelSizes.disconnect();
    const fc = model.get("context");
    if (!fc || !Array.isArray(fc.features)) return;
    const c = colour("context");
    L.geoJSON(fc, {
      interactive: false,
      style: () => ({ color: c, weight: 1.5, opacity: 0.6, fillOpacity: 0.6, fillColor: c }),
      pointToLayer: (_f, ll) => L.circleMarker(ll, { radius: 3, color: c, weight: 1.5,
        opacity: 0.6, fill: true, fillColor: c, fillOpacity: 0.6, interactive: false }),
    }).addTo(context);
    for (const f of fc.features) {  // a small label beside each named point and road
      const g = f.geometry || {}, name = (f.properties || {}).name;
      const xy = g.type === "Point" ? g.coordinates
        : g.type === "LineString" && g.coordinates.length
          ? g.coordinates[Math.floor(g.coordinates.length / 2)] : null;
      if (!name || !xy) continue;
      const label = textElement("div", String(name).replace(/ \(schematic\)$/, ""), LABEL_STYLE);
      const marker = L.marker([xy[1], xy[0]], { interactive: false, keyboard: false,
        icon: L.divIcon({ className: "lmdk-label", iconSize: [0, 0], iconAnchor: [-5, 6],
                          html: label }) }).addTo(context);
      labelled.push({ marker, label, point: g.type === "Point" });
      labelSizes.observe(label);
    }
    labelled.sort((a, b) => b.point - a.point);  // stable: places first, then roads, in order
    declutter();
  }

  // Labels that would overlap one kept before them are hidden at this zoom (shown again when
  // zooming in makes room): overlapping names could not be read at the default zoom. Named
  // places are kept before road names. Each label's box is where Leaflet placed its marker plus
  // the label's size, not where the page has it laid out at the time: the two differ by one
  // offset for all labels once leaflet.css applies, but a host may draw the map before its
  // stylesheet has arrived (the icons then sit in the flow, each 6 px above the last), and a
  // choice made from that layout overlapped once the stylesheet came. So the choice depends
  // only on the zoom (rerun on zoomend) and the labels' sizes (rerun when one changes size: a
  // font arriving, a label first laid out once its map is shown).
  function declutter() {
    const shown = [];
    for (const { marker, label } of labelled) {
      label.style.visibility = "visible";
      const p = L.DomUtil.getPosition(marker.getElement()), size = label.getBoundingClientRect();
      const r = { left: p.x, top: p.y, right: p.x + size.width, bottom: p.y + size.height };
      if (shown.some((o) => r.left < o.right && o.left < r.right && r.top < o.bottom &&
                            o.top < r.bottom)) {
        label.style.visibility = "hidden";
      } else {
        shown.push(r);
      }
    }
  }
  map.on("zoomend", declutter);

  function drawPlaces() {
    places.clearLayers();
    const selected = model.get("selected");
    const list = model.get("places") || [];
    for (const p of list) {
      const isSel = p.name === selected;
      const circle = L.circle([p.lat, p.lon], {
        radius: p.radius_m,
        color: isSel ? colour("selected") : colour("place"),
        weight: isSel ? 3 : 2,
        fillOpacity: 0.25,
        bubblingMouseEvents: false,
        className: "lmdk-place",
        lmdkName: p.name,
      });
      circle.bindTooltip(textElement("span", p.name), { sticky: false });
      circle.on("click", (e) => {
        L.DomEvent.stop(e);
        model.send({ event: "place_click", name: p.name,
                     lat: e.latlng.lat, lon: e.latlng.lng });
      });
      circle.addTo(places);
    }
    box.dataset.places = String(list.length);
  }

  map.on("click", (e) => {
    model.send({ event: "map_click", lat: e.latlng.lat, lon: e.latlng.lng });
  });

  const cross = textElement("div", "+", "position:absolute;left:50%;top:50%;z-index:650;" +
    "transform:translate(-50%,-50%);font:bold 22px sans-serif;color:#000;pointer-events:none;" +
    "text-shadow:0 0 3px #fff,0 0 3px #fff;display:none");
  cross.className = "lmdk-centre";
  cross.setAttribute("aria-hidden", "true");
  box.appendChild(cross);
  box.addEventListener("mousedown", () => box.focus({ preventScroll: true }));
  box.addEventListener("focus", () => {
    map.scrollWheelZoom.enable();
    cross.style.display = box.matches(":focus-visible") ? "block" : "none";
  });
  box.addEventListener("blur", () => { map.scrollWheelZoom.disable(); cross.style.display = "none"; });
  const PAN = { ArrowLeft: [-80, 0], ArrowRight: [80, 0], ArrowUp: [0, -80], ArrowDown: [0, 80] };
  box.addEventListener("keydown", (e) => {
    if (e.target !== box || e.altKey || e.ctrlKey || e.metaKey) return;
    if (PAN[e.key]) {
      map.panBy(PAN[e.key], { animate: false });
    } else if (e.key === "+" || e.key === "=") {
      map.zoomIn(1, { animate: false });
    } else if (e.key === "-" || e.key === "_") {
      map.zoomOut(1, { animate: false });
    } else if (e.key === "Enter" || e.key === " ") {
      const c = map.getCenter();
      model.send({ event: "map_click", lat: c.lat, lon: c.lng });
    } else {
      return;
    }
    cross.style.display = "block";
    e.preventDefault();
  });

  const onLandmarks = () => {
    landmarks.clearLayers();
    dots(landmarks, model.get("landmark_points"),
      { radius: 4, color: colour("landmark"), weight: 1, fill: true, fillOpacity: 0.9 });
  };
  const onDummies = () => {
    dummies.clearLayers();
    dots(dummies, model.get("dummy_points"),
      { radius: 4, color: colour("dummy"), weight: 1, fill: true, fillOpacity: 0.9 });
  };
  const onReleased = () => {
    released.clearLayers();
    dots(released, model.get("released"),
      { radius: 3, color: colour("released"), weight: 1.5, fill: false });
  };
  const onHeight = () => { box.style.height = model.get("height"); map.invalidateSize(); };
  const onColours = () => { drawContext(); drawTrack(); onLandmarks(); onDummies(); onReleased();
                            drawPlaces(); };
  const handlers = {
    track: drawTrack, track_points: drawTrack, context: drawContext,
    landmark_points: onLandmarks, dummy_points: onDummies, released: onReleased,
    places: drawPlaces, selected: drawPlaces, tiles: drawTiles, height: onHeight,
    colours: onColours,
  };
  for (const [key, fn] of Object.entries(handlers)) model.on(`change:${key}`, fn);

  drawTiles();
  drawContext();
  drawTrack();
  onLandmarks();
  onDummies();
  onReleased();
  drawPlaces();

  // The host may have no size yet when the view is created: resize, then fit once.
  const observer = new ResizeObserver(() => {
    map.invalidateSize();
    if (!fitted) fit();
  });
  observer.observe(box);

  return () => {
    observer.disconnect();
    labelSizes.disconnect();
    for (const [key, fn] of Object.entries(handlers)) model.off(`change:${key}`, fn);
    map.remove();
  };
}
