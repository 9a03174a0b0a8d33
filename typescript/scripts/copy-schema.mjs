// The package validates every message against the protocol's schema. The
// schema's one source is protocol/v1.schema.json beside this folder; the
// build copies it into dist so an installed package carries it.
import { copyFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
mkdirSync(join(root, "dist"), { recursive: true });
copyFileSync(join(root, "..", "protocol", "v1.schema.json"), join(root, "dist", "v1.schema.json"));
