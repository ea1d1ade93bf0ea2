/**
 * The import graph of the project's TypeScript, read from the source text: every relative
 * `import … from "./x.ts"`, `export … from "./x.ts"` and `import("./x.ts")` (type-only ones
 * included — a circle of types still ties the files' layers together), and the strongly
 * connected components of that graph: the import circles.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const specifierPattern = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)["'](\.{1,2}\/[^"']+)["']/gm;

/** Every .ts file under `dir`, recursively, as absolute paths. */
export function typeScriptFiles(dir: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) found.push(...typeScriptFiles(path));
    else if (name.endsWith(".ts") && !name.endsWith(".d.ts")) found.push(path);
  }
  return found.sort();
}

/** The files each file imports, restricted to `files` (absolute paths). */
export function importGraph(files: readonly string[]): Map<string, string[]> {
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = readFileSync(file, "utf8");
    const targets = new Set<string>();
    for (const match of text.matchAll(specifierPattern)) {
      const target = resolve(dirname(file), match[1]!);
      if (known.has(target)) targets.add(target);
    }
    graph.set(file, [...targets]);
  }
  return graph;
}

/** The import circles: strongly connected components of more than one file (Tarjan's algorithm). */
export function importCircles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const indexOf = new Map<string, number>();
  const lowOf = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const circles: string[][] = [];
  let next = 0;
  const visit = (file: string): void => {
    indexOf.set(file, next);
    lowOf.set(file, next);
    next++;
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!indexOf.has(target)) {
        visit(target);
        lowOf.set(file, Math.min(lowOf.get(file)!, lowOf.get(target)!));
      } else if (onStack.has(target)) {
        lowOf.set(file, Math.min(lowOf.get(file)!, indexOf.get(target)!));
      }
    }
    if (lowOf.get(file) === indexOf.get(file)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== file);
      if (component.length > 1) circles.push(component.sort());
    }
  };
  for (const file of graph.keys()) if (!indexOf.has(file)) visit(file);
  return circles.sort((a, b) => b.length - a.length);
}

/** A circle as paths relative to `root`, for messages. */
export function describeCircle(circle: readonly string[], root: string): string {
  return circle.map((file) => relative(root, file)).join(", ");
}
