import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app';
import { describeError } from './format';
import { loadConsoleStart } from './settings';
import './styles.css';

const root = createRoot(document.getElementById('root') as HTMLElement);
loadConsoleStart().then(
  (start) =>
    root.render(
      <StrictMode>
        <App start={start} />
      </StrictMode>,
    ),
  (err: unknown) => root.render(<p className="error fatal">The console could not start: {describeError(err)}</p>),
);
