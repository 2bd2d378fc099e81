/**
 * The DICOM names a `dicom_scu` backend's retrieval options accept: storage SOP classes and
 * compressed (encapsulated) transfer syntaxes, each by its PS3.6 Annex A keyword or its UID. Every
 * storage class listed here gets an uncompressed presentation context in each C-GET proposal (in
 * this order: the images archives hold most, first), see docs/dicom.md.
 */

/** Storage SOP classes, keyword -> UID, in proposal order. */
export const STORAGE_CLASSES: Readonly<Record<string, string>> = {
  // Images that archives usually hold compressed (most of the default `retrieve_sop_classes`).
  CTImageStorage: "1.2.840.10008.5.1.4.1.1.2",
  EnhancedCTImageStorage: "1.2.840.10008.5.1.4.1.1.2.1",
  MRImageStorage: "1.2.840.10008.5.1.4.1.1.4",
  EnhancedMRImageStorage: "1.2.840.10008.5.1.4.1.1.4.1",
  ComputedRadiographyImageStorage: "1.2.840.10008.5.1.4.1.1.1",
  DigitalXRayImageStorageForPresentation: "1.2.840.10008.5.1.4.1.1.1.1",
  DigitalMammographyXRayImageStorageForPresentation: "1.2.840.10008.5.1.4.1.1.1.2",
  UltrasoundImageStorage: "1.2.840.10008.5.1.4.1.1.6.1",
  UltrasoundMultiFrameImageStorage: "1.2.840.10008.5.1.4.1.1.3.1",
  SecondaryCaptureImageStorage: "1.2.840.10008.5.1.4.1.1.7",
  XRayAngiographicImageStorage: "1.2.840.10008.5.1.4.1.1.12.1",
  // Other images and the non-image objects found in most studies.
  XRayRadiofluoroscopicImageStorage: "1.2.840.10008.5.1.4.1.1.12.2",
  NuclearMedicineImageStorage: "1.2.840.10008.5.1.4.1.1.20",
  PositronEmissionTomographyImageStorage: "1.2.840.10008.5.1.4.1.1.128",
  MultiFrameGrayscaleByteSecondaryCaptureImageStorage: "1.2.840.10008.5.1.4.1.1.7.2",
  MultiFrameGrayscaleWordSecondaryCaptureImageStorage: "1.2.840.10008.5.1.4.1.1.7.3",
  MultiFrameTrueColorSecondaryCaptureImageStorage: "1.2.840.10008.5.1.4.1.1.7.4",
  MultiFrameSingleBitSecondaryCaptureImageStorage: "1.2.840.10008.5.1.4.1.1.7.1",
  GrayscaleSoftcopyPresentationStateStorage: "1.2.840.10008.5.1.4.1.1.11.1",
  ColorSoftcopyPresentationStateStorage: "1.2.840.10008.5.1.4.1.1.11.2",
  KeyObjectSelectionDocumentStorage: "1.2.840.10008.5.1.4.1.1.88.59",
  BasicTextSRStorage: "1.2.840.10008.5.1.4.1.1.88.11",
  EnhancedSRStorage: "1.2.840.10008.5.1.4.1.1.88.22",
  ComprehensiveSRStorage: "1.2.840.10008.5.1.4.1.1.88.33",
  Comprehensive3DSRStorage: "1.2.840.10008.5.1.4.1.1.88.34",
  XRayRadiationDoseSRStorage: "1.2.840.10008.5.1.4.1.1.88.67",
  MammographyCADSRStorage: "1.2.840.10008.5.1.4.1.1.88.50",
  ChestCADSRStorage: "1.2.840.10008.5.1.4.1.1.88.65",
  EncapsulatedPDFStorage: "1.2.840.10008.5.1.4.1.1.104.1",
  EncapsulatedCDAStorage: "1.2.840.10008.5.1.4.1.1.104.2",
  DigitalXRayImageStorageForProcessing: "1.2.840.10008.5.1.4.1.1.1.1.1",
  DigitalMammographyXRayImageStorageForProcessing: "1.2.840.10008.5.1.4.1.1.1.2.1",
  DigitalIntraOralXRayImageStorageForPresentation: "1.2.840.10008.5.1.4.1.1.1.3",
  DigitalIntraOralXRayImageStorageForProcessing: "1.2.840.10008.5.1.4.1.1.1.3.1",
  BreastTomosynthesisImageStorage: "1.2.840.10008.5.1.4.1.1.13.1.3",
  BreastProjectionXRayImageStorageForPresentation: "1.2.840.10008.5.1.4.1.1.13.1.4",
  BreastProjectionXRayImageStorageForProcessing: "1.2.840.10008.5.1.4.1.1.13.1.5",
  EnhancedXAImageStorage: "1.2.840.10008.5.1.4.1.1.12.1.1",
  EnhancedXRFImageStorage: "1.2.840.10008.5.1.4.1.1.12.2.1",
  EnhancedPETImageStorage: "1.2.840.10008.5.1.4.1.1.130",
  EnhancedUSVolumeStorage: "1.2.840.10008.5.1.4.1.1.6.2",
  RTImageStorage: "1.2.840.10008.5.1.4.1.1.481.1",
  RTDoseStorage: "1.2.840.10008.5.1.4.1.1.481.2",
  RTStructureSetStorage: "1.2.840.10008.5.1.4.1.1.481.3",
  RTPlanStorage: "1.2.840.10008.5.1.4.1.1.481.5",
  RTBeamsTreatmentRecordStorage: "1.2.840.10008.5.1.4.1.1.481.4",
  RTIonPlanStorage: "1.2.840.10008.5.1.4.1.1.481.8",
  RTIonBeamsTreatmentRecordStorage: "1.2.840.10008.5.1.4.1.1.481.9",
  SegmentationStorage: "1.2.840.10008.5.1.4.1.1.66.4",
  SpatialRegistrationStorage: "1.2.840.10008.5.1.4.1.1.66.1",
  RawDataStorage: "1.2.840.10008.5.1.4.1.1.66",
  VLEndoscopicImageStorage: "1.2.840.10008.5.1.4.1.1.77.1.1",
  VideoEndoscopicImageStorage: "1.2.840.10008.5.1.4.1.1.77.1.1.1",
  VLPhotographicImageStorage: "1.2.840.10008.5.1.4.1.1.77.1.4",
  VideoPhotographicImageStorage: "1.2.840.10008.5.1.4.1.1.77.1.4.1",
  VLMicroscopicImageStorage: "1.2.840.10008.5.1.4.1.1.77.1.2",
  VideoMicroscopicImageStorage: "1.2.840.10008.5.1.4.1.1.77.1.2.1",
  VLSlideCoordinatesMicroscopicImageStorage: "1.2.840.10008.5.1.4.1.1.77.1.3",
  VLWholeSlideMicroscopyImageStorage: "1.2.840.10008.5.1.4.1.1.77.1.6",
  OphthalmicPhotography8BitImageStorage: "1.2.840.10008.5.1.4.1.1.77.1.5.1",
  OphthalmicPhotography16BitImageStorage: "1.2.840.10008.5.1.4.1.1.77.1.5.2",
  // Rarer classes.
  OphthalmicTomographyImageStorage: "1.2.840.10008.5.1.4.1.1.77.1.5.4",
  WideFieldOphthalmicPhotographyStereographicProjectionImageStorage:
    "1.2.840.10008.5.1.4.1.1.77.1.5.5",
  WideFieldOphthalmicPhotography3DCoordinatesImageStorage: "1.2.840.10008.5.1.4.1.1.77.1.5.6",
  OphthalmicOpticalCoherenceTomographyEnFaceImageStorage: "1.2.840.10008.5.1.4.1.1.77.1.5.7",
  XRay3DAngiographicImageStorage: "1.2.840.10008.5.1.4.1.1.13.1.1",
  XRay3DCraniofacialImageStorage: "1.2.840.10008.5.1.4.1.1.13.1.2",
  LegacyConvertedEnhancedCTImageStorage: "1.2.840.10008.5.1.4.1.1.2.2",
  LegacyConvertedEnhancedMRImageStorage: "1.2.840.10008.5.1.4.1.1.4.4",
  LegacyConvertedEnhancedPETImageStorage: "1.2.840.10008.5.1.4.1.1.128.1",
  EnhancedMRColorImageStorage: "1.2.840.10008.5.1.4.1.1.4.3",
  MRSpectroscopyStorage: "1.2.840.10008.5.1.4.1.1.4.2",
  ParametricMapStorage: "1.2.840.10008.5.1.4.1.1.30",
  IntravascularOpticalCoherenceTomographyImageStorageForPresentation:
    "1.2.840.10008.5.1.4.1.1.14.1",
  IntravascularOpticalCoherenceTomographyImageStorageForProcessing: "1.2.840.10008.5.1.4.1.1.14.2",
  TwelveLeadECGWaveformStorage: "1.2.840.10008.5.1.4.1.1.9.1.1",
  GeneralECGWaveformStorage: "1.2.840.10008.5.1.4.1.1.9.1.2",
};

/** Compressed (encapsulated) transfer syntaxes a C-GET may propose, keyword -> UID. */
export const COMPRESSED_SYNTAXES: Readonly<Record<string, string>> = {
  JPEGBaseline8Bit: "1.2.840.10008.1.2.4.50",
  JPEGExtended12Bit: "1.2.840.10008.1.2.4.51",
  JPEGLossless: "1.2.840.10008.1.2.4.57",
  JPEGLosslessSV1: "1.2.840.10008.1.2.4.70",
  JPEGLSLossless: "1.2.840.10008.1.2.4.80",
  JPEGLSNearLossless: "1.2.840.10008.1.2.4.81",
  JPEG2000Lossless: "1.2.840.10008.1.2.4.90",
  JPEG2000: "1.2.840.10008.1.2.4.91",
  JPEG2000MCLossless: "1.2.840.10008.1.2.4.92",
  JPEG2000MC: "1.2.840.10008.1.2.4.93",
  HTJ2KLossless: "1.2.840.10008.1.2.4.201",
  HTJ2KLosslessRPCL: "1.2.840.10008.1.2.4.202",
  HTJ2K: "1.2.840.10008.1.2.4.203",
  RLELossless: "1.2.840.10008.1.2.5",
  MPEG2MPML: "1.2.840.10008.1.2.4.100",
  MPEG2MPHL: "1.2.840.10008.1.2.4.101",
  MPEG4HP41: "1.2.840.10008.1.2.4.102",
  MPEG4HP41BD: "1.2.840.10008.1.2.4.103",
  MPEG4HP422D: "1.2.840.10008.1.2.4.104",
  MPEG4HP423D: "1.2.840.10008.1.2.4.105",
  MPEG4HP42STEREO: "1.2.840.10008.1.2.4.106",
  HEVCMP51: "1.2.840.10008.1.2.4.107",
  HEVCM10P51: "1.2.840.10008.1.2.4.108",
};

/** Transfer syntaxes that are never listed: the uncompressed ones are always proposed. */
export const UNCOMPRESSED_SYNTAXES: Readonly<Record<string, string>> = {
  ImplicitVRLittleEndian: "1.2.840.10008.1.2",
  ExplicitVRLittleEndian: "1.2.840.10008.1.2.1",
  DeflatedExplicitVRLittleEndian: "1.2.840.10008.1.2.1.99",
  ExplicitVRBigEndian: "1.2.840.10008.1.2.2",
};

/** Default `retrieve_sop_classes`: the image classes archives usually hold compressed. */
export const DEFAULT_RETRIEVE_SOP_CLASSES: readonly string[] = [
  "CTImageStorage",
  "EnhancedCTImageStorage",
  "MRImageStorage",
  "EnhancedMRImageStorage",
  "ComputedRadiographyImageStorage",
  "DigitalXRayImageStorageForPresentation",
  "DigitalMammographyXRayImageStorageForPresentation",
  "UltrasoundImageStorage",
  "UltrasoundMultiFrameImageStorage",
  "XRayAngiographicImageStorage",
];

/** Default `retrieve_transfer_syntaxes`: the syntaxes imaging archives mostly store. */
export const DEFAULT_RETRIEVE_TRANSFER_SYNTAXES: readonly string[] = [
  "JPEGLosslessSV1",
  "JPEGBaseline8Bit",
  "JPEGLSLossless",
  "JPEG2000Lossless",
  "RLELossless",
];

/** A DICOM UID: dot-separated numbers without leading zeros, at most 64 characters. */
export function isUid(value: string): boolean {
  return value.length <= 64 && /^(0|[1-9][0-9]*)(\.(0|[1-9][0-9]*))+$/.test(value);
}

/** The UID a keyword or UID of `table` names, or undefined. */
export function uidOf(table: Readonly<Record<string, string>>, name: string): string | undefined {
  if (Object.hasOwn(table, name)) return table[name];
  return Object.values(table).includes(name) ? name : undefined;
}

/** The UID of a storage SOP class keyword, or the UID itself (any well-formed UID). */
export function storageClassUid(name: string): string | undefined {
  return uidOf(STORAGE_CLASSES, name) ?? (isUid(name) ? name : undefined);
}

/** The UID of a compressed transfer syntax keyword or UID, or undefined. */
export function compressedSyntaxUid(name: string): string | undefined {
  return uidOf(COMPRESSED_SYNTAXES, name);
}
