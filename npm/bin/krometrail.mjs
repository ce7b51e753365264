#!/usr/bin/env node
// `krometrail` from npm (`npx -y krometrail mcp`): see ../lib/launch.mjs.
import process from "node:process";
import { run } from "../lib/launch.mjs";

run(process.argv.slice(2));
