/** The listener key of a dicom_scp endpoint (apart from endpoint.ts, which loads the DIMSE stack). */

/** The listener key of a dicom_scp endpoint: its bind address and port. */
export function listenerKeyOf(options: Record<string, unknown>): string {
  return `${options.bind_addr}:${options.port}`;
}
