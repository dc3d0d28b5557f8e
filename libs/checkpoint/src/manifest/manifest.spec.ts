import { describe, expect, it } from 'vitest';
import { ManifestFormatError, ManifestVersionError } from '../errors';
import { MANIFEST_VERSION, parseManifest, referencedFiles, serializeManifest } from './manifest';
import { sampleManifest, sha } from './manifest.fixture';

describe('checkpoint manifest', () => {
  it('round-trips through its serialized form', () => {
    const bytes = serializeManifest(sampleManifest);
    expect(parseManifest(bytes, 'm')).toEqual(sampleManifest);
    expect(JSON.parse(bytes.toString()).version).toBe(MANIFEST_VERSION);
  });

  it('lists every distinct file it references once', () => {
    expect([...referencedFiles(sampleManifest).keys()].sort()).toEqual([sha('a'), sha('b'), sha('c'), sha('d')]);
  });

  it('refuses a newer version with ManifestVersionError, saying so', () => {
    const newer = { ...sampleManifest, version: MANIFEST_VERSION + 1 };
    expect(() => parseManifest(JSON.stringify(newer), 'm')).toThrow(ManifestVersionError);
    expect(() => parseManifest(JSON.stringify(newer), 'm')).toThrow(/newer Weir/);
  });

  it('refuses other documents, bad JSON and invalid fields with ManifestFormatError', () => {
    expect(() => parseManifest('{', 'm')).toThrow(ManifestFormatError);
    expect(() => parseManifest(JSON.stringify({ format: 'other', version: 1 }), 'm')).toThrow(/not a Weir checkpoint manifest/);
    const badSha = structuredClone(sampleManifest) as { operators: { subtasks: { files: { sha256: string }[] }[] }[] };
    badSha.operators[0].subtasks[0].files[0].sha256 = 'xyz';
    expect(() => parseManifest(JSON.stringify(badSha), 'm')).toThrow(/operators\.0\.subtasks\.0\.files\.0\.sha256/);
    const badRange = structuredClone(sampleManifest) as { operators: { subtasks: { keyGroups: unknown }[] }[] };
    badRange.operators[0].subtasks[0].keyGroups = [{ start: 9, end: 3 }];
    expect(() => parseManifest(JSON.stringify(badRange), 'm')).toThrow(ManifestFormatError);
  });
});
