import { defineConfig } from 'vitest/config';
export default defineConfig({ test: { name: 'loadgen' } });
//# sourceMappingURL=vitest.config.js.map