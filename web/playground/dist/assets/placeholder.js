document.getElementById("endpoint").textContent =
  document.querySelector('meta[name="forkgraph-endpoint"]').content;
