// The web app's entry: mounts the router into index.html's #app.
import { render } from 'preact';
import { App } from './app.tsx';
import './styles.css';

const root = document.getElementById('app');
if (root) render(<App />, root);
