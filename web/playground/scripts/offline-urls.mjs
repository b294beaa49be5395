// The bundle must not point the browser anywhere but this machine. Third-party code carries a few
// absolute URLs in error texts, comments and "learn more" links (react.dev, github.com, ...); none is
// fetched on its own, but a click or a future change could. The build rewrites each of them to an
// inert about:blank#offline/<host/path> and playground_test.go fails if any survives. XML namespace
// URIs (w3.org) are identifiers, not requests, and loopback URLs stay.

const FOREIGN_URL = /https?:\/\/(?!(?:127\.0\.0\.1|localhost|\[::1\])(?:[:/]|$)|www\.w3\.org\/)([A-Za-z0-9.-]+[^\s"'`)<>\\]*)/g;

/** neutralizeUrls rewrites every foreign http(s) URL in text and reports how many it changed. */
export function neutralizeUrls(text) {
  let count = 0;
  const out = text.replace(FOREIGN_URL, (_, rest) => {
    count++;
    return `about:blank#offline/${rest}`;
  });
  return { text: out, count };
}

/** offlineUrlsPlugin applies neutralizeUrls to every emitted chunk and asset of the build. */
export function offlineUrlsPlugin() {
  return {
    name: 'forkgraph-offline-urls',
    apply: 'build',
    generateBundle(_, bundle) {
      let total = 0;
      for (const file of Object.values(bundle)) {
        if (file.type === 'chunk') {
          const { text, count } = neutralizeUrls(file.code);
          file.code = text;
          total += count;
        } else if (typeof file.source === 'string') {
          const { text, count } = neutralizeUrls(file.source);
          file.source = text;
          total += count;
        }
      }
      this.info(`neutralized ${total} external URL references`);
    },
  };
}
