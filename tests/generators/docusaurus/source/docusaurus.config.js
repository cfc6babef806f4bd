export default {
  title: 'Quasar Docs',
  url: 'https://example.org',
  baseUrl: '/',
  onBrokenLinks: 'warn',
  presets: [['classic', {
    docs: { routeBasePath: '/', sidebarPath: './sidebars.js' },
    blog: false,
    theme: { customCss: './src/css/custom.css' },
  }]],
  themeConfig: {
    navbar: { title: 'Quasar Docs', items: [{ type: 'docSidebar', sidebarId: 'guide', label: 'Guide' }] },
    footer: { copyright: 'Copyright footerword. Built with Docusaurus.' },
  },
};
