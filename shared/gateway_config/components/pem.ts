/**
 * A PEM block value (the keys of `jmix` endpoints).
 */
import { text } from "../values.ts";

/** A PEM block of `label` (`PRIVATE KEY`, `PUBLIC KEY`). */
export const pem = (label: string) =>
  text().refine(
    (v) => v.includes(`-----BEGIN ${label}-----`) && v.includes(`-----END ${label}-----`),
    `must be a PEM block (-----BEGIN ${label}-----)`,
  );
