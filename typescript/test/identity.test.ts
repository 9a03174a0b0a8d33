import assert from "node:assert/strict";
import { test } from "node:test";

import { MCP_URL_ENV, canonicalJson, mcpServerParams, mcpUrl, procedureIdentity } from "symfonic-evals-protocol";

test("procedure identities match the harness's (vectors from the Python companion)", () => {
  assert.equal(
    procedureIdentity("issue_refund", [{ state: { path: "region", op: "eq", value: "US" } }], "verify the account region"),
    "42aa65cf17cec913880e0c5809f733a374a8ed5d03ea56f75d59fe439e8ad839",
  );
  assert.equal(
    procedureIdentity("t", { n: 0.5, big: 1e16, small: 1e-7, x: "é" }, "text"),
    "8a2149b562ff77e1a6f3faf900febd1e77afdd626bdc6feeaef053b02aa99c50",
  );
});

test("numbers print as the harness prints them", () => {
  assert.equal(
    canonicalJson([0.5, 1e16, 1e-7, 0.00001, 123.456, 1e21, -0.0, 2.5e-5, "é\n", 3, -7, null, true, { b: 1, a: [] }]),
    '[0.5,1e+16,1e-7,0.00001,123.456,1e+21,-0.0,0.000025,"é\\n",3,-7,null,true,{"b":1,"a":[]}]',
  );
  assert.throws(() => canonicalJson(Number.NaN));
  assert.throws(() => canonicalJson(undefined));
});

test("the MCP fixture's parameters in each client's shape, and none outside an extension run", () => {
  const env = { [MCP_URL_ENV]: "http://127.0.0.1:9/mcp", MCP_SERVER_COMMAND: "/bin/bridge", MCP_STDIO_ADDR: "127.0.0.1:10" };
  assert.equal(mcpUrl(env), "http://127.0.0.1:9/mcp");
  assert.deepEqual(mcpServerParams("mcp", env), { url: "http://127.0.0.1:9/mcp" });
  assert.deepEqual(mcpServerParams("openai-agents", env), { url: "http://127.0.0.1:9/mcp" });
  assert.deepEqual(mcpServerParams("langchain", env), { url: "http://127.0.0.1:9/mcp", transport: "http" });
  assert.deepEqual(mcpServerParams("stdio", env), { command: "/bin/bridge", args: ["127.0.0.1:10"] });
  assert.equal(mcpServerParams("mcp", {}), undefined);
  assert.equal(mcpServerParams("stdio", { [MCP_URL_ENV]: "x" }), undefined);
  assert.throws(() => mcpServerParams("other" as never, env), TypeError);
});
