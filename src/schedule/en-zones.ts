/**
 * Zones said after a clock time. Abbreviations that name two zones (CST, IST, BST) are not read,
 * so the expression is refused rather than guessed.
 */
export const ZONES: Readonly<Record<string, string>> = {
  utc: 'UTC',
  gmt: 'UTC',
  z: 'UTC',
  et: 'America/New_York',
  est: 'UTC-5',
  edt: 'UTC-4',
  ct: 'America/Chicago',
  cdt: 'UTC-5',
  mt: 'America/Denver',
  mst: 'UTC-7',
  mdt: 'UTC-6',
  pt: 'America/Los_Angeles',
  pst: 'UTC-8',
  pdt: 'UTC-7',
  cet: 'UTC+1',
  cest: 'UTC+2',
  jst: 'UTC+9',
  kst: 'UTC+9',
  hkt: 'UTC+8',
  sgt: 'UTC+8',
  aest: 'UTC+10',
};
export const ZONE_RE = new RegExp(
  `(?<=\\d|[ap]m|noon|midnight)\\s*(?:\\(\\s*)?\\b(${Object.keys(ZONES).join('|')})\\b(?:\\s*\\))?`,
);
