/**
 * Where transform specs come from. The gateway reads them from `transforms_path`; the cloud
 * integration can put a source in front that downloads a spec by transform id into that folder
 * first. Keeping this behind one small interface is what lets it do so.
 */
import { isAbsolute, join, normalize, relative } from "node:path";
import type { TransformSource } from "../pipeline/mod.ts";

/** The interface lives with the build context (pipeline/types.ts); re-exported for its users. */
export type { TransformSource };

/** Specs read from files under `transforms_path`; paths may not escape that folder. */
export class FileTransformSource implements TransformSource {
  readonly root: string;

  constructor(root: string) {
    this.root = normalize(root);
  }

  /** The absolute path of `specPath` under the root; throws when it escapes the root. */
  resolve(specPath: string): string {
    if (isAbsolute(specPath)) {
      throw new Error(`spec_path ${specPath} must be relative to transforms_path`);
    }
    const full = join(this.root, specPath);
    const rel = relative(this.root, full);
    if (rel.startsWith("..") || isAbsolute(rel)) {
      throw new Error(`spec_path ${specPath} points outside transforms_path (${this.root})`);
    }
    return full;
  }

  /** Read the spec text. */
  async read(specPath: string): Promise<string> {
    const file = this.resolve(specPath);
    try {
      return await Deno.readTextFile(file);
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) {
        throw new Error(`transform file ${file} does not exist`);
      }
      throw new Error(`cannot read transform file ${file}: ${(err as Error).message}`);
    }
  }
}
