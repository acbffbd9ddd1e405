// Landmark map for the lmdk Jupyter explorer (anywidget front end).
// `L` (Leaflet) is defined before this code by map_widget.py, which inlines the Leaflet of the
// installed xstatic-leaflet package: no CDN, and no tile request unless the `tiles` trait is set.
//
// Python -> JS (synced traits): track, landmark_points, released, places, selected, tiles,
//   attribution, height.
// JS -> Python (custom messages): {event: "map_click", lat, lon} for a click on the map
//   background; {event: "place_click", name} for a click on a place circle (circles do not
//   bubble their clicks to the map).

const COLOURS = {
  track: "#0072B2",
  landmark: "#CC79A7",
  released: "#D55E00",
  place: "#009E73",
  selected: "#E69F00",
};

function render({ model, el }) {
  const box = document.createElement("div");
  box.className = "lmdk-map";
  box.style.height = model.get("height");
  box.style.width = "100%";
  el.appendChild(box);

  const map = L.map(box, { doubleClickZoom: false, zoomControl: true, attributionControl: true });
  map.setView([0, 0], 2);
  box.lmdkMap = map; // for scripted use (browser tests): el.lmdkMap.latLngToContainerPoint(...)
  L.control.scale().addTo(map);

  let tileLayer = null;
  const track = L.layerGroup().addTo(map);
  const landmarks = L.layerGroup().addTo(map);
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
    const pts = model.get("track");
    if (!pts.length || box.clientHeight === 0 || box.clientWidth === 0) return;
    map.fitBounds(L.latLngBounds(pts), { padding: [10, 10] });
    fitted = true;
  }

  function drawTrack() {
    track.clearLayers();
    const pts = model.get("track");
    if (pts.length > 1) {
      L.polyline(pts, { color: COLOURS.track, weight: 2, opacity: 0.7, interactive: false })
        .addTo(track);
    }
    fitted = false;
    fit();
  }

  function drawMarkers(group, key, style) {
    group.clearLayers();
    for (const p of model.get(key)) {
      L.circleMarker(p, { ...style, interactive: false }).addTo(group);
    }
  }

  function drawPlaces() {
    places.clearLayers();
    const selected = model.get("selected");
    for (const p of model.get("places")) {
      const isSel = p.name === selected;
      const circle = L.circle([p.lat, p.lon], {
        radius: p.radius_m,
        color: isSel ? COLOURS.selected : COLOURS.place,
        weight: isSel ? 3 : 2,
        fillOpacity: 0.25,
        bubblingMouseEvents: false,
        className: "lmdk-place",
      });
      circle.bindTooltip(p.name, { sticky: false });
      circle.on("click", (e) => {
        L.DomEvent.stop(e);
        model.send({ event: "place_click", name: p.name });
      });
      circle.addTo(places);
    }
    box.dataset.places = String(model.get("places").length);
  }

  map.on("click", (e) => {
    model.send({ event: "map_click", lat: e.latlng.lat, lon: e.latlng.lng });
  });

  const onTrack = () => drawTrack();
  const onLandmarks = () => drawMarkers(landmarks, "landmark_points",
    { radius: 4, color: COLOURS.landmark, weight: 1, fill: true, fillOpacity: 0.9 });
  const onReleased = () => drawMarkers(released, "released",
    { radius: 3, color: COLOURS.released, weight: 1.5, fill: false });
  model.on("change:track", onTrack);
  model.on("change:landmark_points", onLandmarks);
  model.on("change:released", onReleased);
  model.on("change:places", drawPlaces);
  model.on("change:selected", drawPlaces);
  model.on("change:tiles", drawTiles);
  const onHeight = () => { box.style.height = model.get("height"); map.invalidateSize(); };
  model.on("change:height", onHeight);

  drawTiles();
  drawTrack();
  onLandmarks();
  onReleased();
  drawPlaces();

  // The output area may have no size yet when the view is created: resize, then fit once.
  const observer = new ResizeObserver(() => {
    map.invalidateSize();
    if (!fitted) fit();
  });
  observer.observe(box);

  return () => {
    observer.disconnect();
    model.off("change:track", onTrack);
    model.off("change:landmark_points", onLandmarks);
    model.off("change:released", onReleased);
    model.off("change:places", drawPlaces);
    model.off("change:selected", drawPlaces);
    model.off("change:tiles", drawTiles);
    model.off("change:height", onHeight);
    map.remove();
  };
}

export default { render };
