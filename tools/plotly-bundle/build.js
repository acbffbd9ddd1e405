// plotly.js's own esbuild settings (node_modules/plotly.js/esbuild-config.js), on entry.js.
const esbuild = require('esbuild');
const { environmentPlugin } = require('esbuild-plugin-environment');
const { glsl } = require('esbuild-plugin-glsl');
const InlineCSSPlugin = require('esbuild-plugin-inline-css');
const version = require('plotly.js/package.json').version;

esbuild.build({
  entryPoints: ['./entry.js'],
  outfile: '../../dashboard/assets/plotly-lmdk.min.js',
  format: 'iife',
  globalName: 'Plotly',
  bundle: true,
  minify: true,
  sourcemap: false,
  legalComments: 'inline',
  banner: { js: `/* plotly.js v${version} (MIT licence, https://github.com/plotly/plotly.js), ` +
    'lmdk custom bundle: scatter, scattergl, bar, heatmap. Built by tools/plotly-bundle. */' },
  plugins: [InlineCSSPlugin(), glsl({ minify: true }), environmentPlugin({ NODE_DEBUG: false })],
  alias: { regl: '@plotly/regl', stream: 'stream-browserify' },
  define: { global: 'window', 'define.amd': 'false' },
  target: 'es2016',
  logLevel: 'info',
}).catch(() => process.exit(1));
