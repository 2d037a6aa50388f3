// The DevTools page: adds the MCP panel beside Network.
chrome.devtools.panels.create("MCP", "", "panel.html");
