/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // Transpile only (isolatedModules): `npm test` type-checks the whole tree with tsc first.
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.jest.json' }],
  },
  // tools/ imports the product as #src/… (package.json "imports": dist/ at run time, src/ here).
  moduleNameMapper: { '^#src/(.*)$': '<rootDir>/src/$1' },
  testTimeout: 30000,
};
