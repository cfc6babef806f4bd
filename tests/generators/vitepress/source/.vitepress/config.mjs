export default {
  title: 'Quasar Docs',
  description: 'A VitePress site built for the extraction test',
  themeConfig: {
    nav: [{ text: 'Guide', link: '/guide/getting-started' }],
    sidebar: [{ text: 'Guide', items: [
      { text: 'Getting Started', link: '/guide/getting-started' },
      { text: 'Configuration', link: '/guide/configuration' } ] }],
    footer: { message: 'Released under the MIT License.', copyright: 'Copyright footerword' },
    outline: [2, 3]
  }
}
