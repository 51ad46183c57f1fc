import { readFileSync } from 'node:fs';

// The DuckDuckGo answers the tests replay (recorded in fixtures/, or built the way the service builds them),
// shared by the contract run and the provider's own tests.

export const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
export const html = (body: string, status = 200) => ({ status, headers: { 'content-type': 'text/html; charset=UTF-8' }, body });

/**
 * A results page as DuckDuckGo builds it (the structure of `fixtures/results.html`): each field
 * is the inner HTML of its element, so the page carries the markup and entities as they are.
 */
export function resultsPage(results: readonly { title: string; url: string; snippet: string }[]): string {
  const blocks = results.map((r, i) => {
    const link = `//duckduckgo.com/l/?uddg=${encodeURIComponent(r.url)}&amp;rut=${i.toString(16).padStart(8, '0')}`;
    return `<div class="result results_links results_links_deep web-result ">
      <div class="links_main links_deep result__body">
        <h2 class="result__title"><a rel="nofollow" class="result__a" href="${link}">${r.title}</a></h2>
        <a class="result__snippet" href="${link}">${r.snippet}</a>
        <div class="clear"></div>
      </div>
    </div>`;
  });
  return `<!DOCTYPE html><html><head><meta http-equiv="content-type" content="text/html; charset=UTF-8" /><title>markup at DuckDuckGo</title></head>
<body><div class="serp__results"><div id="links" class="results">${blocks.join('\n')}</div></div></body></html>`;
}

export const expected = [
  {
    title: 'Tokio - An asynchronous Rust runtime',
    url: 'https://tokio.rs/',
    snippet:
      'Tokio is an asynchronous runtime for the Rust programming language. It provides the building blocks needed for writing network applications without compromising speed.',
  },
  {
    title: 'The Async Ecosystem - Asynchronous Programming in Rust',
    url: 'https://rust-lang.github.io/async-book/08_ecosystem/00_chapter.html',
    snippet:
      'Async runtimes are libraries used for executing async applications. Runtimes usually bundle together a reactor with one or more executors. Reactors provide subscription mechanisms for external events, like async I/O, interprocess communication, and timers.',
  },
  {
    title: 'The State of Async Rust: Runtimes | corrode Rust Consulting',
    url: 'https://corrode.dev/blog/async/',
    snippet: `Tokio's dominance & what it means for library authors: async-std, smol and the "one true runtime" debate, revisited.`,
  },
  {
    title: 'GitHub - smol-rs/smol: A small and fast async runtime for Rust',
    url: 'https://github.com/smol-rs/smol',
    snippet:
      'A small and fast async runtime. This crate simply re-exports other smaller async crates (see the source). To use tokio-based libraries with smol, apply the async-compat adapter to futures and I/O types.',
  },
  {
    title: 'tokio::runtime - Rust',
    url: 'https://docs.rs/tokio/latest/tokio/runtime/index.html?search=block_on#modules',
    snippet:
      'The Tokio runtime. Unlike other Rust programs, asynchronous applications require runtime support. In particular, the following runtime services are necessary: An I/O event loop, called the driver, which drives I/O resources and dispatches I/O events to tasks that depend on them.',
  },
];
